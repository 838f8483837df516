"""fabriclab's embedded P4_16 compiler: v1model programs to bmv2 JSON and P4Info.

Stages, each producing plain data that can be dumped:
preprocessor (text + line map) -> syntax (lark parse tree -> AST) ->
typecheck (typed IR) -> bmv2 (JSON) and p4info (P4Info protobuf).
"""

__version__ = "0.1.0"
