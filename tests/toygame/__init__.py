"""A third game in one folder: the proof that the game contract is all a game needs.

*Toy shedding* (not part of cardlab): 12 cards (10, J, Q of the four suits),
2 or 3 players, 3 cards each, one card turned up. Lay one card of the top
card's suit or rank, or draw one card (always allowed; an empty stock is
refilled from the table, turned over); the first player out wins, the others
score one point a card. The registration is one line: `register(SPEC)`.
"""
