"""The numpy SIMT interpreter for lowered ``gpu.func`` kernels."""

from .interpreter import *  # noqa: F403
from .interpreter import __all__  # noqa: F401
