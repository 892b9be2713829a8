"""Where training hands are played: the league, self-play over the batched engines, the Gymnasium envs.

The bottom room of training: it imports no other room.
"""
