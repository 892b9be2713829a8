"""Hand reading: what a player can tell of the hidden hands from what it saw.

`reader`: a trained hand reader (a network from the table view to each hidden card's place) and the
shipped ones; `belief`: the likelihood of each dealt world under each opponent model, from the
replayed record; `reading`: a search's reading of the table, its worlds weighed by a belief or a
reader, and each other seat's recognised model; `posterior`: worlds drawn from the exact posterior
given the record (rejection, then Metropolis chains), to measure what the record holds.
"""
