"""The bottom layer, files: how every program of the project writes to disk (output folders
that are checked before any work and left as they were found when a start is refused)."""
