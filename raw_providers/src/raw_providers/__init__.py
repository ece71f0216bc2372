"""Model providers for raw, through the official OpenAI and Anthropic SDKs.

The adapters arrive with the provider protocol of ``raw_core``; until then this
distribution exists so the workspace, packaging and CI cover all three members.
"""

__all__: list[str] = []
