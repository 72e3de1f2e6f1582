"""What the adapters (OpenSpiel, PettingZoo, Gymnasium) present of a game:
its players, their dense actions, whether it is sequential, and immutable
nodes (a state, the moves that led to it, what happens next).

One mechanism for all three adapters, with no optional dependency: the
adapters only translate these nodes into their libraries' terms.

**Actions.** Role ``r``'s action ``a`` is ``game.actions(r)[a]``, the fixed
dense order of :class:`ggpnet.VectorEnv` (every move the role can ever make).

**Players.** Every role but GDL-II's ``random``, in the order of the roles.
``random`` is chance: where it has more than one legal move, a chance node
(uniform over its legal moves) comes before the players choose; where it has
one, that move is played without a node.

**Sequential or simultaneous.** A game is *sequential* when at most one
player has more than one legal move in every state: a survey plays random
games on a :class:`ggpnet.VectorEnv` (``SURVEY_LANES`` lanes for
``SURVEY_STEPS`` steps, seeded, episodes restarting as they end) and checks
every state it visits. The survey proves nothing about the states it did not
visit, so a sequential game is checked again in every state the adapter
makes: a state where two players have a real choice raises
:class:`ggpnet.AdapterError` (``kind="not_sequential"``), never a silently
wrong game; ``dynamics="simultaneous"`` is always sound. In a sequential game
each joint move is one turn: the player with the choice moves, the others
play their one legal move; where no player has a choice, the turn is the
first player whose one legal move is not a *pass* (a move the survey saw the
player make while another player chose), else the first player.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Set, Tuple, Union

import numpy as np

from ._ggpnet import Game, Move, State, VectorEnv
from .errors import AdapterError, IllegalMoveError

SURVEY_LANES = 32
"""Lanes of the survey that decides whether a game is sequential."""
SURVEY_STEPS = 256
"""Steps of the survey (every lane, episodes restarting as they end)."""

CHANCE = -1
"""The node's player at a chance node (OpenSpiel's ``PlayerId.CHANCE``)."""
SIMULTANEOUS = -2
"""The node's player where every player moves at once (``PlayerId.SIMULTANEOUS``)."""
TERMINAL = -4
"""The node's player at a terminal state (``PlayerId.TERMINAL``)."""
TRUNCATED = -5
"""The node's player past ``max_length`` joint moves, for a spec that
truncates (the environments) rather than raising."""

Trail = Optional[Tuple["Trail", Tuple[Tuple[int, ...], Optional[Tuple[Tuple[str, ...], ...]]]]]
"""The joint moves so far, newest first: ``(earlier, (actions per role, percepts per role))``."""


def is_path(source: object) -> bool:
    """Whether :meth:`ggpnet.Game.load` reads `source` as a path (not as rules)."""
    if isinstance(source, os.PathLike):
        return True
    return isinstance(source, str) and not any(c in source for c in "(\n") and "<<" not in source


def load(source: Union[str, "os.PathLike[str]", Game], load_options: Dict[str, object]) -> Game:
    """`source` loaded with `load_options`, or `source` itself when it is a game."""
    if isinstance(source, Game):
        if load_options:
            raise AdapterError(
                "load options are for a path or rules, not for a loaded Game: "
                + ", ".join(sorted(load_options)),
                "setting",
            )
        return source
    return Game.load(source, **load_options)  # type: ignore[arg-type]


class Node:
    """An immutable node: a game state, the joint moves that led to it, and
    what comes next (``player``: a player's number, :data:`CHANCE`,
    :data:`SIMULTANEOUS` or :data:`TERMINAL`; ``legal``: per role, its legal
    actions in ascending order, ``None`` at a terminal state; ``chance``: the
    action ``random`` drew for the coming joint move, if it drew one)."""

    __slots__ = ("spec", "state", "depth", "chance", "trail", "player", "legal")

    spec: "Spec"
    state: State
    depth: int
    chance: Optional[int]
    trail: Trail
    player: int
    legal: Optional[Tuple[Tuple[int, ...], ...]]

    def __copy__(self) -> "Node":
        return self

    def __deepcopy__(self, memo: object) -> "Node":
        return self

    def __reduce__(self):
        return (_restore_node, (self.spec, self.state.facts(), self.depth, self.chance, self.steps()))

    def steps(self) -> List[Tuple[Tuple[int, ...], Optional[Tuple[Tuple[str, ...], ...]]]]:
        """The joint moves so far, oldest first: per step, the action of
        every role and, in GDL-II, every role's percepts after it."""
        out = []
        trail = self.trail
        while trail is not None:
            trail, step = trail
            out.append(step)
        out.reverse()
        return out

    def __str__(self) -> str:
        lines = self.state.facts()
        if self.chance is not None:
            lines = lines + [f"random draws {self.spec.move_text(self.spec.random_role, self.chance)}"]
        return "\n".join(lines)


def _restore_node(spec: "Spec", facts: List[str], depth: int, chance: Optional[int], steps) -> Node:
    trail: Trail = None
    for joint, percepts in steps:
        trail = (trail, (tuple(joint), None if percepts is None else tuple(tuple(p) for p in percepts)))
    return spec.node(spec.game.state_from_kif(facts), depth, chance, trail)


class Spec:
    """A game as the adapters present it (see the module's documentation).

    ``dynamics``: ``"auto"`` (the survey decides), ``"sequential"`` (refused
    with ``AdapterError`` when the survey meets a state where two players
    choose) or ``"simultaneous"``. ``EngineError`` for a game the
    interpreter runs (dense actions need the propnet).
    """

    def __init__(
        self,
        game: Game,
        dynamics: str = "auto",
        *,
        name: Optional[str] = None,
        truncate: bool = False,
        max_length: Optional[int] = None,
    ) -> None:
        if dynamics not in ("auto", "sequential", "simultaneous"):
            raise AdapterError(
                f"dynamics must be 'auto', 'sequential' or 'simultaneous', not {dynamics!r}", "setting"
            )
        self.game = game
        self.dynamics = dynamics
        self.name = name
        """The short name the game is registered under with OpenSpiel, if it is."""
        self.roles: List[str] = list(game.roles)
        self.random_role: Optional[int] = game.random_role
        self.players: List[int] = [r for r in range(len(self.roles)) if r != self.random_role]
        """The role of each player (every role but ``random``)."""
        if not self.players:
            raise AdapterError("the game has no role but random", "roles")
        self.actions: List[List[Move]] = [game.actions(r) for r in range(len(self.roles))]
        self.texts: List[List[str]] = [[str(m) for m in moves] for moves in self.actions]
        self.index: List[Dict[Move, int]] = [{m: i for i, m in enumerate(ms)} for ms in self.actions]
        self.bases: List[str] = game.bases
        self.base_index: Dict[str, int] = {fact: i for i, fact in enumerate(self.bases)}
        self.imperfect_information: bool = game.is_gdl2
        """GDL-II: players see their own moves and percepts, not the state."""
        self.max_length: int = game.max_playout_depth if max_length is None else max_length
        """The most joint moves a game may take (the game's ``max_playout_depth``)."""
        if self.max_length < 1:
            raise AdapterError("max_length must be at least 1", "setting")
        self.truncate = truncate
        """Whether a game longer than ``max_length`` ends truncated (else it raises)."""
        self.num_actions: int = max(len(self.actions[r]) for r in self.players)
        self.passes: List[Set[int]] = [set() for _ in self.players]
        seen_two, self.survey_states = self._survey()
        if dynamics == "sequential" and seen_two is not None:
            raise AdapterError(
                f"dynamics='sequential', but two players choose in a state: {seen_two}", "not_sequential"
            )
        self.sequential: bool = dynamics == "sequential" or (dynamics == "auto" and seen_two is None)
        self.initial: Node = self.node(game.initial_state(), 0, None, None)

    def __copy__(self) -> "Spec":
        return self

    def __deepcopy__(self, memo: object) -> "Spec":
        return self

    def __reduce__(self):
        # A registered spec pickles as its name (the game is not rebuilt on
        # unpickling in a process that registered it); another as its game.
        if self.name is not None and REGISTRY.get(self.name) is self:
            return (_restore_spec, (self.name, None, self.dynamics))
        return (_restore_spec, (self.name, self.game, self.dynamics, self.truncate, self.max_length))

    def _survey(self) -> Tuple[Optional[str], int]:
        """Random games on a VectorEnv: a state where two players choose (its
        facts), or None; the pass moves; the number of states seen."""
        env = VectorEnv(self.game, SURVEY_LANES, seed=0, threads=1)
        random = np.full((SURVEY_LANES, len(self.roles)), -1, dtype=np.int64)
        width = [len(self.actions[r]) for r in self.players]
        seen = 0
        for _ in range(SURVEY_STEPS):
            mask = env.legal_mask[:, self.players, :]
            counts = mask.sum(axis=2)
            choosers = (counts > 1).sum(axis=1)
            seen += SURVEY_LANES
            if (choosers > 1).any():
                lane = int(np.flatnonzero(choosers > 1)[0])
                return " ".join(env.state(lane).facts()), seen
            one = choosers == 1
            for p in range(len(self.players)):
                rows = one & (counts[:, p] == 1)
                if rows.any():
                    moves = mask[rows, p, : width[p]].argmax(axis=1)
                    self.passes[p].update(int(a) for a in np.unique(moves))
            env.step(random)
        return None, seen

    def move_text(self, role: Optional[int], action: int) -> str:
        """The KIF of role `role`'s action `action`."""
        assert role is not None
        texts = self.texts[role]
        if 0 <= action < len(texts):
            return texts[action]
        return f"<no action {action} of {self.roles[role]}>"

    def node(self, state: State, depth: int, chance: Optional[int], trail: Trail) -> Node:
        """The node of `state` after `depth` joint moves (`chance`: the
        action ``random`` drew for the coming joint move)."""
        game = self.game
        node = Node()
        node.spec, node.state, node.depth, node.chance, node.trail = self, state, depth, chance, trail
        if game.is_terminal(state):
            node.player, node.legal = TERMINAL, None
            return node
        if depth >= self.max_length:
            if self.truncate:
                node.player, node.legal = TRUNCATED, None
                return node
            raise AdapterError(
                f"the game passed {self.max_length} joint moves (max_playout_depth) without ending: "
                "load it with a larger max_playout_depth",
                "too_long",
            )
        legal = []
        for role, index in enumerate(self.index):
            moves = game.legal_moves(state, role)
            if not moves:
                raise AdapterError(
                    f"{self.roles[role]} has no legal move in a state that is not terminal: "
                    + " ".join(state.facts()),
                    "no_legal_move",
                )
            legal.append(tuple(sorted(index[m] for m in moves)))
        node.legal = tuple(legal)
        choosers = [p for p, r in enumerate(self.players) if len(legal[r]) > 1]
        if self.sequential and len(choosers) > 1:
            names = ", ".join(self.roles[self.players[p]] for p in choosers)
            raise AdapterError(
                f"the game was registered as sequential, but {names} all have a choice in "
                + " ".join(state.facts())
                + " (register it with dynamics='simultaneous')",
                "not_sequential",
            )
        if self.random_role is not None and chance is None and len(legal[self.random_role]) > 1:
            node.player = CHANCE
        elif not self.sequential:
            node.player = SIMULTANEOUS
        elif choosers:
            node.player = choosers[0]
        else:
            forced = [p for p, r in enumerate(self.players) if legal[r][0] not in self.passes[p]]
            node.player = forced[0] if forced else 0
        return node

    def draw(self, node: Node, action: int) -> Node:
        """The node after ``random`` draws `action` at chance node `node`."""
        assert self.random_role is not None and node.legal is not None
        if action not in node.legal[self.random_role]:
            raise self.illegal(self.random_role, action)
        return self.node(node.state, node.depth, action, node.trail)

    def illegal(self, role: int, action: int) -> IllegalMoveError:
        """The error for role `role`'s action `action`, not legal here."""
        error = IllegalMoveError(
            f"action {action} ({self.move_text(role, action)}) of {self.roles[role]} is not legal here"
        )
        error.role, error.action = self.roles[role], int(action)
        if 0 <= action < len(self.texts[role]):
            error.move = self.texts[role][action]
        return error

    def play(self, node: Node, chosen: Dict[int, int]) -> Node:
        """The node after a joint move: `chosen` maps roles to actions; every
        other role plays its one legal move (``random`` its drawn one)."""
        if node.legal is None:
            raise AdapterError("the game has ended: no move can be played", "setting")
        joint: List[int] = []
        for role, legal in enumerate(node.legal):
            if role in chosen:
                action = int(chosen[role])
                if action not in legal:
                    raise self.illegal(role, action)
            elif role == self.random_role and node.chance is not None:
                action = node.chance
            elif len(legal) == 1:
                action = legal[0]
            else:
                raise AdapterError(f"{self.roles[role]} must choose a move here", "setting")
            joint.append(action)
        moves = [self.actions[r][a] for r, a in enumerate(joint)]
        after = self.game.next_state(node.state, moves)
        percepts = None
        if self.imperfect_information:
            percepts = tuple(tuple(p) for p in self.game.percepts(node.state, moves))
        return self.node(after, node.depth + 1, None, (node.trail, (tuple(joint), percepts)))

    def settle(self, node: Node, rng: np.random.Generator) -> Node:
        """`node`, or past its chance nodes: ``random`` draws uniformly from
        `rng` (the environments' chance)."""
        while node.player == CHANCE:
            assert node.legal is not None and self.random_role is not None
            legal = node.legal[self.random_role]
            node = self.draw(node, legal[int(rng.integers(len(legal)))])
        return node

    def goals(self, node: Node) -> List[float]:
        """Each player's goal at terminal node `node` (``AdapterError`` when
        a player has none, or one outside 0..100)."""
        goals = self.game.goals(node.state)
        out = []
        for role in self.players:
            goal = goals[role]
            if goal is None:
                raise AdapterError(f"{self.roles[role]} has no goal in a terminal state", "no_goal")
            if not 0 <= goal <= 100:
                raise AdapterError(f"{self.roles[role]}'s goal {goal} is outside 0..100", "goal_range")
            out.append(float(goal))
        return out

    def observation(self, node: Node, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The base propositions of `node`'s state (1 where one holds), in
        the order of ``game.bases`` (:class:`ggpnet.VectorEnv`'s observations)."""
        if out is None:
            out = np.zeros(len(self.bases), dtype=np.float32)
        else:
            out.fill(0)
        index = self.base_index
        for fact in node.state.facts():
            out[index[fact]] = 1
        return out

    def mask(self, node: Node, player: int, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Player `player`'s legal actions at `node` as a mask of
        ``num_actions`` (all false at a terminal state)."""
        if out is None:
            out = np.zeros(self.num_actions, dtype=np.int8)
        else:
            out.fill(0)
        if node.legal is not None:
            out[list(node.legal[self.players[player]])] = 1
        return out

    def history_text(self, node: Node) -> str:
        """The joint moves so far, one line per step (perfect information)."""
        return "\n".join(" ".join(self.texts[r][a] for r, a in enumerate(joint)) for joint, _ in node.steps())

    def private_text(self, node: Node, player: int, last_only: bool = False) -> str:
        """Player `player`'s own moves and percepts so far, one line per
        step (GDL-II); `last_only`: the last step's."""
        role = self.players[player]
        steps = node.steps()
        if last_only:
            steps = steps[-1:]
        lines = []
        for joint, percepts in steps:
            sees = " ".join(percepts[role]) if percepts is not None else ""
            lines.append(f"does {self.texts[role][joint[role]]} sees {sees}".rstrip())
        return "\n".join(lines)


def _restore_spec(
    name: Optional[str], game: Optional[Game], dynamics: str, truncate: bool = False, max_length: Optional[int] = None
) -> Spec:
    """The registered spec `name` (unpickling in the process that registered
    it), else a new one of `game`."""
    known = REGISTRY.get(name) if name is not None else None
    if known is not None:
        return known
    if game is None:
        raise AdapterError(f"no game is registered as {name!r} in this process", "setting")
    return Spec(game, dynamics, name=name, truncate=truncate, max_length=max_length)


REGISTRY: Dict[str, Spec] = {}
"""The specs registered with OpenSpiel, by short name."""

__all__ = ["Spec", "Node", "CHANCE", "SIMULTANEOUS", "TERMINAL", "TRUNCATED", "SURVEY_LANES", "SURVEY_STEPS"]
