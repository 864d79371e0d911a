"""proctor's version, in a module of its own so any module can import it at its top (no cycle through the
package's __init__)."""

__version__ = "0.1.0"
