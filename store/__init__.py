"""Content-addressed blob store, remembered facts and the ContextBank (upcoming).

Imports nothing from the other packages of Fabric.
"""
