"""coax's concepts in rlnb: function approximators, TD and policy-gradient targets, the `Worker`, a DQN built from them.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/coax/."""
