"""The test the demo agent makes pass."""

from greet import greet

assert greet("Ada") == "Hello, Ada!", f"greet('Ada') returned {greet('Ada')!r}"
print("ok: greet('Ada') == 'Hello, Ada!'")
