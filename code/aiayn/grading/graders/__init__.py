"""One module per chapter (or per part of a chapter), each registering its exercises.

Every module in this package is imported here, in alphabetical order, so adding a grader is
adding a file: no list to keep in sync. Within a module, exercises keep their definition order.
"""

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_info.name}")
