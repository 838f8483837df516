"""fabriclab: the `fabriclab` command and the scenario runner."""

__version__ = "0.1.0"
