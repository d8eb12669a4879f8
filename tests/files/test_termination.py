"""A program asked to stop with SIGTERM stops as on a Ctrl-C, with status 143."""

from __future__ import annotations

import os
import signal
import time

import pytest

from patchwork_env.files.termination import (
    INTERRUPTED_STATUS,
    TERMINATED_STATUS,
    stops_on_sigterm_as_on_ctrl_c,
)


def handles_ctrl_c(send: signal.Signals) -> int:
    """A program's main that sends itself ``send`` and handles a Ctrl-C as the programs do."""
    try:
        os.kill(os.getpid(), send)
        time.sleep(5)
    except KeyboardInterrupt:
        return INTERRUPTED_STATUS
    return 0


def test_a_sigterm_runs_the_programs_ctrl_c_handling_and_ends_with_143() -> None:
    main = stops_on_sigterm_as_on_ctrl_c(handles_ctrl_c)
    assert main(signal.SIGTERM) == TERMINATED_STATUS == 143


def test_a_ctrl_c_keeps_its_status_130() -> None:
    main = stops_on_sigterm_as_on_ctrl_c(handles_ctrl_c)
    assert main(signal.SIGINT) == INTERRUPTED_STATUS


def test_the_programs_own_status_is_kept_when_no_signal_comes() -> None:
    assert stops_on_sigterm_as_on_ctrl_c(lambda: 2)() == 2


def test_the_sigterm_handler_is_the_earlier_one_again_after_the_program() -> None:
    before = signal.getsignal(signal.SIGTERM)
    stops_on_sigterm_as_on_ctrl_c(handles_ctrl_c)(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_second_sigterm_would_end_the_process_at_once() -> None:
    seen = []

    def main() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt:
            seen.append(signal.getsignal(signal.SIGTERM))
            return INTERRUPTED_STATUS
        return 0

    stops_on_sigterm_as_on_ctrl_c(main)()
    assert seen == [signal.SIG_DFL]


def test_a_sigterm_before_the_program_handles_ctrl_c_is_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    def starting() -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        return 0

    assert stops_on_sigterm_as_on_ctrl_c(starting)() == TERMINATED_STATUS
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(": terminated\n"), err


def test_a_ctrl_c_the_program_does_not_handle_is_left_to_propagate() -> None:
    def unhandled() -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stops_on_sigterm_as_on_ctrl_c(unhandled)()
