"""A tiny module the demo agent fixes."""


def greet(name):
    """Greet someone by name."""
    return "Hello!"
