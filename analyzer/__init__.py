"""Static analysis of snippets with libcst: what a snippet returns, and whether it is
bounded (upcoming).

Imports nothing from the other packages of Fabric.
"""
