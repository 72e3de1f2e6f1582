"""An episode of a GDL or GDL-II game for the PettingZoo and Gymnasium
environments: the current node of :mod:`ggpnet._adapt`, chance drawn from a
numpy generator, observations (the base propositions, or in GDL-II the
player's percepts) and masks as both libraries document them (a dict with
``observation`` and ``action_mask``, ``int8``), rewards (the goals when the
game ends), and what to do with an illegal action."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Union

import numpy as np

from . import _adapt
from ._adapt import SIMULTANEOUS, TERMINAL, TRUNCATED, Node, Spec
from ._ggpnet import Game
from .errors import AdapterError

ILLEGAL_ACTIONS = ("raise", "random")


def make_spec(
    source: Union[str, "os.PathLike[str]", Game],
    dynamics: str,
    max_steps: Optional[int],
    load_options: Dict[str, Any],
) -> Spec:
    """The spec of an environment's game, truncated past `max_steps` joint
    moves (the game's ``max_playout_depth`` by default)."""
    game = _adapt.load(source, load_options)
    return Spec(game, dynamics, truncate=True, max_length=max_steps)


def dict_space(size: int, num_actions: int) -> Any:
    """The space of an observation vector of `size` and a mask of `num_actions`."""
    from gymnasium import spaces  # both environment modules need gymnasium; this one does not

    return spaces.Dict(
        {
            "observation": spaces.Box(0, 1, (size,), dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (num_actions,), dtype=np.int8),
        }
    )


def check_illegal_action(value: str) -> str:
    if value not in ILLEGAL_ACTIONS:
        raise AdapterError(f"illegal_action must be 'raise' or 'random', not {value!r}", "setting")
    return value


class Episode:
    """The node of the current episode and its views.

    A player observes the base propositions in a GDL game. In GDL-II, whose
    state is hidden, it observes its percepts instead: a vector over every
    percept its role can receive (``Game.possible_percepts``), 1 for those
    received with the last joint move (all 0 before the first; ``random``'s
    draw is part of the joint move, not a step of its own)."""

    def __init__(self, spec: Spec, illegal_action: str) -> None:
        self.spec = spec
        self.illegal_action = check_illegal_action(illegal_action)
        self.rng = np.random.default_rng()
        self.node: Node = spec.initial
        self.vocabulary: Optional[List[Dict[str, int]]] = None
        """Per player, its percepts' positions in its observation (GDL-II)."""
        if spec.imperfect_information:
            self.vocabulary = [
                {text: i for i, text in enumerate(spec.game.possible_percepts(role))}
                for role in spec.players
            ]
        self.seen: List[np.ndarray] = [np.zeros(n, dtype=np.int8) for n in self.observation_sizes()]

    def observation_sizes(self) -> List[int]:
        """Per player, the length of its observation vector."""
        if self.vocabulary is None:
            return [len(self.spec.bases)] * len(self.spec.players)
        return [len(v) for v in self.vocabulary]

    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._advance(self.spec.initial, self.spec.settle(self.spec.initial, rng))

    def _advance(self, origin: Node, node: Node) -> None:
        """Moves to `node`, a descendant of `origin`, and records the
        percepts of the steps between."""
        self.node = node
        if self.vocabulary is None:
            return
        self.seen = [np.zeros(len(v), dtype=np.int8) for v in self.vocabulary]
        trail = node.trail
        while trail is not None and trail is not origin.trail:
            trail, (_, percepts) = trail
            for player, role in enumerate(self.spec.players):
                for text in percepts[role] if percepts is not None else ():
                    self.seen[player][self.vocabulary[player][text]] = 1

    @property
    def ended(self) -> bool:
        return self.node.player in (TERMINAL, TRUNCATED)

    @property
    def terminated(self) -> bool:
        return self.node.player == TERMINAL

    @property
    def truncated(self) -> bool:
        return self.node.player == TRUNCATED

    @property
    def simultaneous(self) -> bool:
        return self.node.player == SIMULTANEOUS

    def legal(self, player: int) -> tuple:
        """Player `player`'s legal actions (none once the episode ended)."""
        if self.node.legal is None:
            return ()
        return self.node.legal[self.spec.players[player]]

    def chooses(self, player: int) -> bool:
        """Whether `player` moves now: in a sequential game, the player whose
        turn it is; in a simultaneous game, every player."""
        node = self.node
        return node.legal is not None and node.player in (player, SIMULTANEOUS)

    def observe(self, player: int, mask_all: bool = False) -> Dict[str, np.ndarray]:
        """``{"observation": bases or percepts, "action_mask": legal
        actions}``, new arrays. The mask is the player's legal actions when
        it moves now (or always, with `mask_all`), else all zeros."""
        spec = self.spec
        if self.vocabulary is None:
            observation = spec.observation(self.node, np.zeros(len(spec.bases), dtype=np.int8))
        else:
            observation = self.seen[player].copy()
        mask = np.zeros(spec.num_actions, dtype=np.int8)
        if mask_all or self.chooses(player):
            spec.mask(self.node, player, mask)
        return {"observation": observation, "action_mask": mask}

    def action(self, player: int, action: Any) -> int:
        """`action` of `player`, checked: an illegal one raises
        ``IllegalMoveError``, or becomes a random legal one (``"random"``)."""
        legal = self.legal(player)
        try:
            chosen = int(action)
        except (TypeError, ValueError):
            chosen = -1
        if chosen in legal:
            return chosen
        if self.illegal_action == "random" and legal:
            return int(legal[int(self.rng.integers(len(legal)))])
        raise self.spec.illegal(self.spec.players[player], chosen)

    def play(self, actions: Dict[int, int]) -> None:
        """Plays a joint move (player -> checked action; the others their
        one legal move) and the chance nodes after it."""
        chosen = {self.spec.players[p]: a for p, a in actions.items()}
        self._advance(self.node, self.spec.settle(self.spec.play(self.node, chosen), self.rng))

    def rewards(self) -> List[float]:
        """Per player, its goal once the game terminated, else 0."""
        if self.terminated:
            return self.spec.goals(self.node)
        return [0.0] * len(self.spec.players)

    def render(self) -> str:
        return "\n".join(self.node.state.facts())
