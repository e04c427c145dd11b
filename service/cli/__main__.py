"""``python -m service.cli``: the ``gin-rummy`` command."""

import sys

from service.cli import main

sys.exit(main())
