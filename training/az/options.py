"""The options of a search-guided run (:class:`AZOptions`) and their checks.

Every field is a ``train.py --algo az`` flag of the same name (``--simulations 32``). The
search's options are the settings of the same names of
:class:`~patchwork_env.agents.az.config.SearchConfig`, with their defaults from
:data:`~patchwork_env.agents.az.config.TRAINING`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

import torch

from patchwork_env import agents
from patchwork_env.agents.az.agent import MAX_EVALUATIONS
from patchwork_env.agents.az.config import TRAINING, SearchConfig
from patchwork_env.agents.az.games import GAMES, PATCHWORK, AZGame, get_game
from patchwork_env.agents.az.net import AZ_KINDS, AZNet
from patchwork_env.agents.device import DeviceError, check_precision, resolve_device
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.evaluation.tournament import MAX_GAMES
from patchwork_env.training.az.limits import check_memory
from patchwork_env.training.az.selfplay.ray_actors import import_ray
from patchwork_env.training.checks import (
    AT_LEAST_ONE,
    FRACTION,
    NOT_NEGATIVE,
    POSITIVE,
    Range,
    check_ranges,
    check_types,
    machine_cpus,
    machine_threads,
)

MAX_ITERATIONS = 10**9
MAX_PLAYOUTS = 10_000
"""The most random playouts per position (of the value targets and of each leaf)."""
AUTO_WORKERS = -1
"""``--workers`` that stands for :data:`DEFAULT_WORKERS` where this machine has the CPUs for
them, else 1 (the default)."""
DEFAULT_WORKERS = 2
"""The self-play processes of a run that leaves ``--workers`` at :data:`AUTO_WORKERS`, where
this machine has the CPUs for them."""
MAX_RAY_WORKERS = 10_000
"""The most self-play actors on a Ray cluster (local processes: this machine's CPUs)."""
RANGES = {
    "iterations": Range(1, MAX_ITERATIONS), "games_per_iteration": Range(1, MAX_GAMES),
    "parallel_games": Range(1, MAX_GAMES), "simulations": Range(0, MAX_EVALUATIONS - 1),
    "max_considered": Range(1, N_ACTIONS), "top_k": Range(1, N_ACTIONS),
    "gumbel_scale": NOT_NEGATIVE, "c_visit": NOT_NEGATIVE, "c_scale": POSITIVE,
    "leaf_playouts": Range(0, MAX_PLAYOUTS), "playout_mix": FRACTION,
    "score_weight": FRACTION, "score_scale": POSITIVE, "playout_weight": FRACTION,
    "playout_iterations": Range(0, MAX_ITERATIONS), "playouts": Range(1, MAX_PLAYOUTS),
    "root_value_weight": FRACTION, "full_search_fraction": FRACTION,
    "cheap_simulations": Range(0, MAX_EVALUATIONS - 1), "hidden": Range(1, 65_536),
    "layers": Range(1, 64),
    "blocks": Range(1, 256), "channels": Range(1, 4_096),
    "teacher_positions": AT_LEAST_ONE, "teacher_epochs": Range(0, 1_000, above=True),
    "learning_rate": Range(0, 1, above=True), "lr_drop_factor": Range(0, 1, above=True),
    "weight_decay": NOT_NEGATIVE, "average_decay": Range(0, 0.999),
    "value_weight": NOT_NEGATIVE,
    "score_head_weight": NOT_NEGATIVE, "ownership_weight": NOT_NEGATIVE,
    "batch_size": Range(1, 1_000_000), "sample_reuse": Range(0, 1_000, above=True),
    "buffer_size": AT_LEAST_ONE, "eval_every": Range(0, MAX_ITERATIONS),
    "eval_games": Range(0, MAX_GAMES), "eval_evaluations": Range(1, MAX_EVALUATIONS),
}
"""The range of each number option (those of the seed and threads: the shared ones of
:data:`~patchwork_env.training.checks.COMMON_RANGES`); the replay buffer, the teacher's
positions, the games and the network are bounded by the machine's memory too."""


INFERENCE = ("auto", "local", "service")
"""The choices of ``--inference``."""


class AZRunError(Exception):
    """A run folder or option that cannot be used as asked (the message is one line)."""


def parse_lr_drops(text: str) -> list[int]:
    """The iterations of an ``lr_drops`` text (``"100,150"``), increasing; :class:`AZRunError`
    naming the text if it is not comma-separated, increasing iterations of at least 1."""
    try:
        drops = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise AZRunError(f"--lr-drops must be comma-separated iteration numbers, got "
                         f"{text!r}") from None
    if any(not 1 <= d <= MAX_ITERATIONS for d in drops) or drops != sorted(set(drops)):
        raise AZRunError(f"--lr-drops must be increasing iterations from 1 to "
                         f"{MAX_ITERATIONS:,}, got {text!r}")
    return drops


@dataclass
class AZOptions:
    """Everything a search-guided run depends on."""

    iterations: int = 12
    """Self-play + learning rounds to run (a resumed run continues up to this number)."""
    games_per_iteration: int = 512
    """Games of self-play per iteration."""
    parallel_games: int = 256
    """Games in flight at once: every network call evaluates one leaf of each."""
    # The search's settings (SearchConfig's of the same names; its docstrings say more).
    simulations: int = TRAINING.simulations
    """Simulations per move after the root's evaluation."""
    max_considered: int = TRAINING.max_considered
    """Root actions sampled by Gumbel-top-k for sequential halving."""
    top_k: int = TRAINING.top_k
    """Legal actions kept (by prior) at inner nodes of the search."""
    gumbel_scale: float = TRAINING.gumbel_scale
    """Scale of the root's Gumbel noise (0: no exploration)."""
    c_visit: float = TRAINING.c_visit
    """sigma(q) = (c_visit + max visits) * c_scale * q."""
    c_scale: float = TRAINING.c_scale
    """See c_visit."""
    every_choice: bool = TRAINING.every_choice
    """The search considers the best action of every choice of the turn (each slot,
    advancing) before second-best ones."""
    leaf_playouts: int = TRAINING.leaf_playouts
    """Random playouts from each leaf the search evaluates, their mean result mixed into
    the leaf's value (0: the network's value alone)."""
    playout_mix: float = TRAINING.playout_mix
    """Weight of the leaf playouts' mean result in a leaf's value."""
    score_weight: float = TRAINING.score_weight
    """Weight of the clipped score difference in a finished game's value (0: win/loss)."""
    score_scale: float = TRAINING.score_scale
    """Score difference that counts as a full win in the shaped value."""
    playout_weight: float = 1.0
    """Weight, in the first iteration, of the random-playout estimate in the value target
    (the rest is the game's outcome); it falls linearly to 0 over playout_iterations."""
    playout_iterations: int = 16
    """Iterations over which the playout estimate's weight falls to 0."""
    playouts: int = 8
    """Random playouts per position for the playout estimate."""
    root_value_weight: float = 0.5
    """Weight of the search's value of each position in its value target (the rest is the
    target above: outcome and playouts); forced moves, never searched, keep that target."""
    full_search_fraction: float = 1.0
    """Playout cap randomization: the chance that a move of self-play is searched with
    simulations, its position a policy target; the other moves are searched with
    cheap_simulations and teach the value only (1: every move searched in full)."""
    cheap_simulations: int = 4
    """Simulations of the moves not searched in full (at most simulations when
    full_search_fraction is below 1)."""
    net: str = "shaped"
    """Network body: shaped (an MLP with a shape-aware placement head), mlp, stencil or
    resnet (residual convolutions over the quilts with the shaped placement head, for an
    accelerator)."""
    hidden: int = 256
    """Width of the network's hidden layers (resnet: of its context vector)."""
    layers: int = 2
    """Hidden layers of the mlp and shaped bodies."""
    blocks: int = 4
    """Residual blocks of the resnet and stencil bodies."""
    channels: int = 32
    """Planes (convolution channels) of the resnet and stencil bodies."""
    init: str = ""
    """An az network file to start from (default: fresh weights from the seed); read only
    when the run starts, since a resumed run's network is its checkpoint's."""
    teacher: str = "greedy"
    """An agent spec whose play the network imitates before self-play (e.g. greedy, an
    agent of the game played; empty: none, start from a uniform prior); see
    training/az/warm_start.py."""
    teacher_positions: int = 50_000
    """Positions of the teacher's play to imitate."""
    teacher_epochs: float = 4.0
    """Passes over those positions."""
    learning_rate: float = 1e-3
    """Adam's learning rate (before the first of lr_drops)."""
    lr_drops: str = ""
    """Comma-separated iterations after which the learning rate is multiplied by
    lr_drop_factor (e.g. 250,290: the rate until iteration 250, a tenth of it to 290, a
    hundredth after); a resumed run may add drops at iterations it has not trained yet."""
    lr_drop_factor: float = 0.1
    """What each of lr_drops multiplies the learning rate by."""
    weight_decay: float = 1e-4
    """Decoupled weight decay."""
    average_decay: float = 0.9
    """The run publishes (as net.pt, and plays in its evaluations) a moving average of the
    learner's weights that keeps this much of itself each iteration, about the last
    1 / (1 - average_decay) iterations (fewer in the first ones); 0: the learner's own
    network. Self-play and learning are the same either way (training/az/averaging.py); a
    resumed run may change it."""
    value_weight: float = 1.0
    """Weight of the value's squared error in the loss."""
    score_head_weight: float = 0.0
    """Weight of the score head's loss (the cross-entropy of the final score difference's
    distribution); above 0 (or ownership_weight above 0) gives the network its auxiliary
    heads (training/az/aux_targets.py)."""
    ownership_weight: float = 0.0
    """Weight of the ownership head's loss (the binary cross-entropy of each cell of both
    final quilts, averaged over the cells)."""
    value_reads_score: bool = False
    """The value head reads the score head's distribution (the chances of winning and
    losing on points, the expected difference) beside its features (needs
    score_head_weight above 0)."""
    batch_size: int = 256
    """Samples per learner step."""
    sample_reuse: float = 4.0
    """Learner steps per iteration: enough for each new policy target to be drawn this many
    times on average (every sample is one, unless full_search_fraction is below 1)."""
    augment: bool = True
    """Show the learner each sample under a random one of the quilt's 8 symmetries."""
    buffer_size: int = 100_000
    """Samples the replay buffer keeps (the oldest are dropped)."""
    eval_every: int = 5
    """Iterations between evaluations (0: none; the last iteration is always evaluated)."""
    eval_games: int = 40
    """Paired games per evaluation opponent."""
    eval_opponents: str = "greedy"
    """Comma-separated agent specs to evaluate against."""
    eval_evaluations: int = 32
    """Network evaluations per move of the searched agent in evaluations."""
    seed: int = 0
    """Seeds the network, the games, the search's noise and the minibatches."""
    threads: int = 0
    """CPU threads for torch and numba (0: leave their defaults)."""
    device: str = "auto"
    """Where the learner and this process's self-play network run: auto (CUDA where this
    machine has it, else MPS, else the CPU), cpu, cuda, cuda:N or mps. A resumed run may
    change it: its checkpoint holds CPU copies."""
    precision: str = "fp32"
    """The network's arithmetic on the device: fp32, bf16 (mixed, on CUDA or the CPU) or
    fp16 (mixed, on CUDA only; the learner scales its loss). A resumed run may change it."""
    workers: int = AUTO_WORKERS
    """Self-play processes (each plays its share of the games with one torch thread; 1:
    self-play in the learner's process; -1: two where this machine has two CPUs or more,
    else one). The samples depend on this number."""
    inference: str = "auto"
    """Where the self-play processes' leaves are evaluated: local (each process with its
    own copy of the network, on the CPU), service (one inference service in the learner's
    process evaluates the leaves of all processes together, on --device) or auto (service
    when --device is not the CPU, else local)."""
    ray_address: str = ""
    """Run the self-play workers (--workers of them) as Ray actors: local (Ray started on
    this machine), auto or HOST:PORT (a running cluster); empty: processes of this
    machine."""
    game: str = "patchwork"
    """The game to learn: patchwork or draft (Patchwork Draft; see docs/training.md for
    the options it does not take)."""
    rules: str = "default"
    """Rule preset of the games (the draft's: default or no-stars)."""
    run_dir: str = ""
    """Folder for the checkpoint, the network and the metrics (default: runs/az-seed<seed>)."""
    resume: bool = False
    """Continue the run in run_dir from its checkpoint."""
    overwrite: bool = False
    """Start afresh in a run_dir that holds another run."""

    def check(self) -> None:
        """:class:`AZRunError` naming the first option out of its range, or the options
        whose arrays would not fit into this machine's memory (:mod:`.limits`)."""
        try:
            check_types(self)
            check_ranges(self, RANGES)
            if self.workers < 1 and self.workers != AUTO_WORKERS:
                raise ValueError(f"--workers must be at least 1, or {AUTO_WORKERS} for "
                                 f"{DEFAULT_WORKERS} where this machine has the CPUs, got "
                                 f"{self.workers}")
            workers = Range(1, MAX_RAY_WORKERS) if self.ray_address else Range(
                1, machine_threads, why="the CPUs of this machine")
            if self.workers != AUTO_WORKERS:
                check_ranges(self, {"workers": workers})
        except ValueError as e:
            raise AZRunError(str(e)) from None
        if self.value_reads_score and not self.score_head_weight > 0:
            raise AZRunError("--value-reads-score needs the score head: a "
                             "--score-head-weight above 0")
        if self.full_search_fraction < 1 and self.cheap_simulations > self.simulations:
            raise AZRunError(f"--cheap-simulations must be at most --simulations "
                             f"({self.simulations}), got {self.cheap_simulations}")
        self.lr_drop_iterations()
        try:
            check_precision(self.precision, resolve_device(self.device))
        except DeviceError as e:
            raise AZRunError(str(e)) from None
        if self.inference not in INFERENCE:
            raise AZRunError(f"--inference must be one of {', '.join(INFERENCE)}, got "
                             f"{self.inference!r}")
        if self.net not in AZ_KINDS:
            raise AZRunError(f"--net must be one of {', '.join(AZ_KINDS)}, got {self.net!r}")
        if self.game not in GAMES:
            raise AZRunError(f"--game must be one of {', '.join(GAMES)}, got {self.game!r}")
        try:
            rules = self.az_game.get_rules(self.rules)
        except (KeyError, ValueError) as e:
            raise AZRunError(f"--rules: {e}") from None
        if self.az_game is not PATCHWORK:
            self._check_hidden_game()
        if self.eval_every and (self.eval_games < 2 or self.eval_games % 2):
            raise AZRunError(f"--eval-games must be even and at least 2, got {self.eval_games}")
        if self.ray_address:
            try:
                import_ray()
            except RuntimeError as e:
                raise AZRunError(f"--ray-address: {e}") from None
        if self.teacher and self.init:
            raise AZRunError("give a --teacher or an --init network, not both")
        try:
            self.search_config()
            check_memory(self, self.az_game.observation_size(rules))
        except ValueError as e:
            raise AZRunError(str(e)) from None
        for name, spec in [("--eval-opponents", s) for s in self.opponents()] + (
                [("--teacher", self.teacher)] if self.teacher else []):
            if spec.split(":")[0].strip() == "human":
                raise AZRunError(f"{name}: {spec} is not an agent that plays by itself")
            try:
                agents.make(spec, seed=0, game=self.game)
            except ValueError as e:
                raise AZRunError(f"{name}: {spec}: {str(e).splitlines()[0]}") from None

    def _check_hidden_game(self) -> None:
        """:class:`AZRunError` for an option the draft game does not take (yet)."""
        name = self.game
        refused = [
            (self.leaf_playouts > 0, f"--leaf-playouts: the {name} game's search has no leaf "
                                     "playouts: pass --leaf-playouts 0"),
            (self.aux_heads, f"--score-head-weight and --ownership-weight: the {name} game's "
                             "network has no auxiliary heads: pass 0"),
            (self.net == "stencil", f"--net: the {name} game's network is mlp, shaped or "
                                    "resnet, not stencil"),
            (self.inference == "service" or (
                self.inference == "auto" and resolve_device(self.device).type != "cpu"),
             f"--inference: the {name} game's self-play evaluates its leaves in each worker: "
             "pass --inference local"),
        ]
        for bad, message in refused:
            if bad:
                raise AZRunError(message)

    def with_workers(self) -> AZOptions:
        """These options with ``workers`` :data:`AUTO_WORKERS` replaced by the number it
        stands for here: :data:`DEFAULT_WORKERS`, or 1 on a machine with fewer CPUs (Ray
        actors are not this machine's, so they are always :data:`DEFAULT_WORKERS`)."""
        if self.workers != AUTO_WORKERS:
            return self
        enough = self.ray_address or machine_cpus() >= DEFAULT_WORKERS
        return replace(self, workers=DEFAULT_WORKERS if enough else 1)

    @property
    def az_game(self) -> AZGame:
        """The game these options learn (:mod:`patchwork_env.agents.az.games`)."""
        return get_game(self.game)

    def network(self) -> AZNet:
        """A network of the shape these options describe, its weights fresh from the
        seed."""
        torch.manual_seed(self.seed)
        game = self.az_game
        return AZNet(game.observation_size(game.get_rules(self.rules)), kind=self.net,
                     hidden=self.hidden, layers=self.layers, blocks=self.blocks,
                     channels=self.channels, aux=self.aux_heads,
                     value_reads_score=self.value_reads_score, game=self.game)

    @property
    def aux_heads(self) -> bool:
        """Whether the network has the auxiliary heads (a weight on either's loss)."""
        return self.score_head_weight > 0 or self.ownership_weight > 0

    def opponents(self) -> list[str]:
        """The evaluation opponents' specs."""
        return [s.strip() for s in self.eval_opponents.split(",") if s.strip()]

    def search_config(self) -> SearchConfig:
        """How self-play searches under these options: the options of
        :class:`SearchConfig`'s names, the rest of it as :data:`TRAINING` has it."""
        return TRAINING.replace(**{f.name: getattr(self, f.name) for f in fields(SearchConfig)
                                   if hasattr(self, f.name)})

    def lr_drop_iterations(self) -> list[int]:
        """The iterations of ``lr_drops``, increasing; :class:`AZRunError` if malformed."""
        return parse_lr_drops(self.lr_drops)

    def learning_rate_at(self, iteration: int) -> float:
        """The learning rate of ``iteration`` (counted from 0): ``learning_rate`` times
        ``lr_drop_factor`` for each drop at or before it."""
        passed = sum(1 for d in self.lr_drop_iterations() if d <= iteration)
        return self.learning_rate * self.lr_drop_factor ** passed

    def playout_weight_at(self, iteration: int) -> float:
        """The playout estimate's weight in the value targets of ``iteration`` (from 0)."""
        if self.playout_iterations == 0:
            return 0.0
        return self.playout_weight * max(0.0, 1.0 - iteration / self.playout_iterations)

    def folder(self) -> Path:
        """The run folder."""
        return Path(self.run_dir or f"runs/az-seed{self.seed}")
