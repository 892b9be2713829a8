"""An agent that fails at play time, named: `AgentFailure` and `checked_action`.

Whatever an agent does wrong (it raises, answers something that is not an
action id, chooses a move its mask refuses, gives non-finite numbers) the
caller gets one `AgentFailure` naming the agent and the failure, before
anything reaches the env, so the game is left as it was. The message
(`public`) says what kind of failure it was but never quotes the agent's
own message or move: those may name the agent's cards, which the web app
must not show. `detail` keeps the raised message for the command line.
`timed_action` adds a time limit (the web app's tables use it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from cardlab.agents.base import Advice, Agent, advise
from cardlab.envs.checked_json import excerpt


class AgentFailure(ValueError):
    """An agent gave no legal move: `who` names it, `reason` says how (card-free), `detail` adds its words."""

    def __init__(self, who: str, reason: str, detail: str = "") -> None:
        self.who, self.reason, self.detail = who, reason, detail
        super().__init__(self.public + (f" ({detail})" if detail else ""))

    def __reduce__(self) -> tuple[type[AgentFailure], tuple[str, str, str]]:
        """Pickled as its three fields, so that a failure in a worker process reaches the caller as itself
        (the default pickles `args`, the one message, which `__init__` cannot take back)."""
        return AgentFailure, (self.who, self.reason, self.detail)

    @property
    def public(self) -> str:
        """The message without `detail`: what a page may show the person."""
        return f"{self.who} failed: {self.reason}"

    def named(self, who: str) -> AgentFailure:
        """The same failure under the name its caller knows the agent by."""
        return AgentFailure(who, self.reason, self.detail)


class StopPlay(Exception):
    """Raised by an agent on purpose to end play (a person closed the input): passed on, not a failure."""


def checked_action(agent: Agent, observation: dict[str, np.ndarray], who: str) -> int:
    """The agent's move here, or an `AgentFailure` naming `who` (the env is not touched either way)."""
    try:
        action: Any = agent.act(observation)
    except AgentFailure as err:
        raise err.named(who) from err
    except StopPlay:
        raise
    except Exception as err:  # an agent's bug of any kind is its failure, not the caller's
        raise AgentFailure(who, f"it raised {type(err).__name__}", excerpt(str(err), 200)) from err
    return checked_choice(action, observation["action_mask"], who)


def checked_actions(agent: Agent, observations: np.ndarray, masks: np.ndarray, who: str) -> np.ndarray:
    """`act_batch`'s moves as int64, or an `AgentFailure` naming `who` and the first game it failed in."""
    try:
        actions = np.asarray(agent.act_batch(observations, masks))
    except AgentFailure as err:
        raise err.named(who) from err
    except Exception as err:  # as in checked_action
        raise AgentFailure(who, f"it raised {type(err).__name__}", excerpt(str(err), 200)) from err
    if actions.shape != (len(masks),) or not np.issubdtype(actions.dtype, np.integer):
        raise AgentFailure(who, f"it answered {len(masks)} games with a {actions.dtype} array of shape "
                                f"{actions.shape}, not one action id each")
    check_legal(actions, masks, lambda b: f"{who} (game {b})")
    return actions.astype(np.int64)


def check_legal(actions: np.ndarray, masks: np.ndarray, who: Callable[[int], str]) -> None:
    """An `AgentFailure` naming `who(b)` for the first row b whose action its mask refuses: one vectorised
    look, a loop only to name the row."""
    inside = (actions >= 0) & (actions < masks.shape[1])
    if not (inside.all() and masks[np.arange(len(masks)), np.where(inside, actions, 0)].all()):
        for b, action in enumerate(actions.tolist()):
            checked_choice(action, masks[b], who(b))


def checked_choice(action: Any, mask: np.ndarray, who: str) -> int:
    """`action` as an int if `mask` allows it; else an `AgentFailure` naming `who`."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise AgentFailure(who, f"it answered {type(action).__name__}, not an action id")
    if not 0 <= int(action) < len(mask) or not mask[int(action)]:
        raise AgentFailure(who, "it chose an illegal move")
    return int(action)


def finite_logits(logits: np.ndarray, mask: np.ndarray, who: str) -> None:
    """Refuse logits whose legal entries are NaN or infinite: their argmax and softmax mean nothing."""
    if not bool(np.isfinite(np.where(np.asarray(mask, dtype=bool), logits, 0.0)).all()):
        raise AgentFailure(who, "its logits are not finite on this observation")


def checked_advice(agent: Agent, observation: dict[str, np.ndarray], top: int, who: str) -> list[Advice]:
    """`advise`, or an `AgentFailure` naming `who`: it raised, or gave no legal move a probability (NaN)."""
    try:
        advice = advise(agent, observation, top)
    except AgentFailure as err:
        raise err.named(who) from err
    except Exception as err:  # as in checked_action
        raise AgentFailure(who, f"it raised {type(err).__name__}", excerpt(str(err), 200)) from err
    if not advice:
        raise AgentFailure(who, "it gave no legal move a probability (NaN or zero everywhere)")
    return advice


def timed_action(agent: Agent, observation: dict[str, np.ndarray], who: str, seconds: float) -> int:
    """`checked_action` on a thread of its own: an `AgentFailure` too if it takes more than `seconds`.

    A thread cannot be stopped: one that overruns is left to finish on its
    own copy of the observation, so its agent must not be asked again (the
    web app's table seats another agent in its place).
    """
    observation = {key: np.array(value, copy=True) for key, value in observation.items()}
    answer: list[int | AgentFailure] = []

    def run() -> None:
        try:
            answer.append(checked_action(agent, observation, who))
        except AgentFailure as err:
            answer.append(err)

    thread = threading.Thread(target=run, name=f"cardlab agent {who}", daemon=True)
    thread.start()
    thread.join(seconds)
    if not answer:
        raise AgentFailure(who, f"it took more than {seconds:g} s to move" if thread.is_alive()
                           else "it stopped without a move")
    if isinstance(answer[0], AgentFailure):
        raise answer[0]
    return answer[0]
