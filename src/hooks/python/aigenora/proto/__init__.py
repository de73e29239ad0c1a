"""Protocol-side SDK: hook base class, state-dir files, decision windows and helper modules."""
