"""The local web app of `cardlab serve`: play the bots in a browser, ask them for advice, replay hands."""
