"""Warnings raised by ssvmlinear."""


class ConvergenceWarning(UserWarning):
    """A solver stopped at max_iter (or was interrupted) before meeting its stopping rule."""
