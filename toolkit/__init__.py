"""Design, lint, simulate and serve approval workflows.

The public surface lives here; implementation modules are imported lazily by users
who need them (``toolkit.engine``, ``toolkit.simulate``, ``toolkit.viz``...).
"""

from toolkit.errors import ApiError, ErrorCode
from toolkit.version import distribution_version

__all__ = ["ApiError", "ErrorCode", "__version__"]
__version__ = distribution_version()
