"""Exploitability: a best responder trained (lean PPO) or searched against a frozen agent.

The top room of training: it uses the trainers and nothing imports it there.
"""
