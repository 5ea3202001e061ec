"""``python -m gpusp``: the ``gpusp`` command (:mod:`gpusp.launch`)."""

import sys

from .launch import main

sys.exit(main())
