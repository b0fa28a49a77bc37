"""``python -m pqsift``: the ``pqsift`` command line (see :mod:`pqsift.cli`)."""

from __future__ import annotations

import sys

from pqsift.cli import main

sys.exit(main())
