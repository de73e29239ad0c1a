"""The `aigenora` Python SDK embedded in the Rust binary: the API that protocol hooks.py files import."""

# The reference client release whose hooks API this package mirrors.
__version__ = "0.1.4"
