"""raw_core: the tool contract of a local coding agent, as an embeddable library."""

__all__: list[str] = []
