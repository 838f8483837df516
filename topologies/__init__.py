"""Fabric descriptions and the Mininet networks built from them."""
