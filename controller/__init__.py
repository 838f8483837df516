"""The subnet manager: P4Runtime clients, LID assignment, routing, address book."""
