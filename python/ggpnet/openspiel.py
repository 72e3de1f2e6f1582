"""GDL games as OpenSpiel games (``pip install open_spiel``).

>>> import pyspiel, ggpnet.openspiel
>>> name = ggpnet.openspiel.register("games/connect_four.kif")  # doctest: +SKIP
>>> game = pyspiel.load_game(name)                                # doctest: +SKIP

:func:`register` registers a game with ``pyspiel.register_game`` under a short
name (``gdl_`` and the file's stem by default), one ``GameType`` and
``GameInfo`` per game, so that ``pyspiel.load_game(name)`` makes it and
OpenSpiel's algorithms (MCTS, CFR, ``random_sim_test``, ...) run on it.

How a GDL game appears (the rules of :mod:`ggpnet._adapt`, shared with the
PettingZoo and Gymnasium adapters):

- **players**: every role but GDL-II's ``random``, in the order of the roles;
- **actions**: player ``p``'s action ``a`` is ``game.actions(role)[a]``, the
  dense order of :class:`ggpnet.VectorEnv`; ``num_distinct_actions`` is the
  most any player has; ``action_to_string`` is the move's KIF;
- **dynamics**: ``SEQUENTIAL`` when a survey of random games saw at most one
  player with a real choice (more than one legal move) in every state,
  ``SIMULTANEOUS`` otherwise; a sequential game meeting a state where two
  players choose raises :class:`ggpnet.AdapterError`
  (``kind="not_sequential"``): register it with ``dynamics="simultaneous"``.
  Each joint move of GDL is one OpenSpiel move (sequential: the player with
  the choice moves, the others play their one legal move) or one
  simultaneous node;
- **chance**: ``random`` with more than one legal move is a chance node
  (uniform over its legal moves, outcomes its dense actions) before the
  players move; ``chance_mode`` is ``EXPLICIT_STOCHASTIC`` for a game with
  ``random``, else ``DETERMINISTIC``;
- **information**: ``PERFECT_INFORMATION`` for GDL, ``IMPERFECT_INFORMATION``
  for GDL-II (``sees`` or ``random``): a player's information state string is
  its own moves and percepts, one line per joint move, its observation
  string the last line; a GDL game's information state string is the joint
  moves so far and its observation string the state's facts;
- **observation tensor**: in GDL the base propositions, 1.0 where one
  holds, in the order of ``game.bases``; in GDL-II, whose state is hidden,
  what the observation string says as numbers: the player's action in the
  last joint move (one-hot over ``num_distinct_actions``), then its
  percepts after it (1.0 for each of ``game.possible_percepts(role)`` it
  received, padded to the most any player can receive); all 0 at the start;
- **returns**: the players' goals (0 to 100) at the end, 0 before
  (``TERMINAL`` reward model, ``GENERAL_SUM`` utility); ``max_game_length``
  is the game's ``max_playout_depth`` (a longer game raises
  ``AdapterError``, ``kind="too_long"``).

Games run on the propnet (``EngineError`` for a game the interpreter runs).
OpenSpiel clones states by copying their attributes: a state here holds one
immutable node, so a clone costs no evaluation; serialization
(``pyspiel.serialize_game_and_state``) works in a process that registered
the game.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any, List, Optional, Union

import numpy as np

from . import _adapt
from ._adapt import CHANCE, SIMULTANEOUS, TERMINAL, Node, Spec
from ._ggpnet import Game, State
from .errors import AdapterError

__all__ = ["register", "load", "spec", "ggpnet_state", "Spec"]

_LOCK = threading.Lock()
_CLASSES: Optional[tuple] = None


def _default_name(source: object) -> str:
    if isinstance(source, Game) or not _adapt.is_path(source):
        raise AdapterError("a game given as rules or as a Game needs a short_name", "setting")
    stem = Path(os.fspath(source)).stem  # type: ignore[arg-type]
    return "gdl_" + re.sub(r"[^A-Za-z0-9_]", "_", stem)


def register(
    source: Union[str, "os.PathLike[str]", Game],
    short_name: Optional[str] = None,
    *,
    dynamics: str = "auto",
    long_name: Optional[str] = None,
    **load_options: Any,
) -> str:
    """Registers a GDL game with OpenSpiel and returns its short name, for
    ``pyspiel.load_game``.

    `source`: a path, the rules' text, or a loaded :class:`ggpnet.Game`.
    `short_name`: ``gdl_`` and the file's stem by default (needed for rules
    or a Game). `dynamics`: ``"auto"`` (sequential when the survey of
    :mod:`ggpnet._adapt` finds it so), ``"sequential"`` or ``"simultaneous"``.
    `load_options` go to :meth:`ggpnet.Game.load` (``max_playout_depth``,
    grounding limits, ...). Registering the same game (same rules, settings
    and dynamics) under the same name again returns the name;
    ``AdapterError`` (``kind="name_taken"``) for a name of another game or of
    one of OpenSpiel's own.
    """
    import pyspiel

    game = _adapt.load(source, load_options)
    name = short_name or _default_name(source)
    with _LOCK:
        known = _adapt.REGISTRY.get(name)
        if known is not None:
            same = (known.game.rules, known.game.settings, known.dynamics) == (game.rules, game.settings, dynamics)
            if same:
                return name
            raise AdapterError(f"{name!r} is registered with OpenSpiel for another game", "name_taken")
        if name in pyspiel.registered_names():
            raise AdapterError(f"{name!r} is the name of one of OpenSpiel's games", "name_taken")
        spec = Spec(game, dynamics, name=name)
        game_type = _game_type(pyspiel, spec, long_name or f"{name} (GDL, ggpnet)")
        game_info = pyspiel.GameInfo(
            num_distinct_actions=spec.num_actions,
            max_chance_outcomes=len(spec.actions[spec.random_role]) if spec.random_role is not None else 0,
            num_players=len(spec.players),
            min_utility=0.0,
            max_utility=100.0,
            utility_sum=None,
            max_game_length=spec.max_length,
        )
        game_class, _, _ = _classes()
        # One class per game, as OpenSpiel's own Python games register theirs
        # (a class outlives the interpreter's finalization where a closure
        # would be freed without the GIL when OpenSpiel's registry is destroyed).
        attributes = {"_spec": spec, "_game_type": game_type, "_game_info": game_info, "__module__": __name__}
        registered = type(f"GdlGame_{name}", (game_class,), attributes)
        pyspiel.register_game(game_type, registered)
        _adapt.REGISTRY[name] = spec
    return name


def load(
    source: Union[str, "os.PathLike[str]", Game], short_name: Optional[str] = None, **options: Any
) -> Any:
    """``pyspiel.load_game(register(source, short_name, **options))``."""
    import pyspiel

    return pyspiel.load_game(register(source, short_name, **options))


def spec(name: str) -> Spec:
    """How the game registered as `name` is presented: its ggpnet game
    (``.game``), players' roles (``.players``), dense actions
    (``.actions``), whether it is sequential (``.sequential``), ..."""
    known = _adapt.REGISTRY.get(name)
    if known is None:
        raise AdapterError(f"no game is registered as {name!r}", "setting")
    return known


def ggpnet_state(state: Any) -> State:
    """The :class:`ggpnet.State` of an OpenSpiel state of a registered game
    (at a chance node, the state before ``random``'s draw is played)."""
    node = getattr(state, "_node", None)
    if not isinstance(node, Node):
        raise AdapterError("not a state of a game registered by ggpnet.openspiel", "setting")
    return node.state


def _load_registered(game_string: str) -> Any:
    """A registered game from its string (unpickling)."""
    import pyspiel

    return pyspiel.load_game(game_string)


def _restore_state(serialized: str) -> Any:
    """A state of a registered game from ``pyspiel.serialize_game_and_state``
    (unpickling)."""
    import pyspiel

    return pyspiel.deserialize_game_and_state(serialized)[1]


def _game_type(pyspiel: Any, spec: Spec, long_name: str) -> Any:
    kind = pyspiel.GameType
    return kind(
        short_name=spec.name,
        long_name=long_name,
        dynamics=kind.Dynamics.SEQUENTIAL if spec.sequential else kind.Dynamics.SIMULTANEOUS,
        chance_mode=(
            kind.ChanceMode.EXPLICIT_STOCHASTIC if spec.random_role is not None else kind.ChanceMode.DETERMINISTIC
        ),
        information=(
            kind.Information.IMPERFECT_INFORMATION
            if spec.imperfect_information
            else kind.Information.PERFECT_INFORMATION
        ),
        utility=kind.Utility.GENERAL_SUM,
        reward_model=kind.RewardModel.TERMINAL,
        max_num_players=len(spec.players),
        min_num_players=len(spec.players),
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={},
    )


def _classes() -> tuple:
    """The pyspiel subclasses (made once, on first use: pyspiel is optional)."""
    global _CLASSES
    if _CLASSES is not None:
        return _CLASSES
    import pyspiel

    class GdlGame(pyspiel.Game):
        """A GDL game registered by :func:`ggpnet.openspiel.register`."""

        _spec: Spec
        _game_type: Any
        _game_info: Any

        def __init__(self, params: Optional[dict] = None) -> None:
            super().__init__(self._game_type, self._game_info, params or {})

        def __reduce__(self) -> tuple:
            return (_load_registered, (str(self),))

        def new_initial_state(self) -> "GdlState":
            return GdlState(self, self._spec, self._spec.initial)

        def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> "GdlObserver":
            if not isinstance(iig_obs_type, pyspiel.IIGObservationType):
                params, iig_obs_type = iig_obs_type, None
            if params:
                raise AdapterError(f"observation parameters are not supported: {params}", "setting")
            return GdlObserver(self._spec, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))

    class GdlState(pyspiel.State):
        """A state of a registered GDL game: one immutable node."""

        def __init__(self, game: Any, spec: Spec, node: Node) -> None:
            super().__init__(game)
            self._spec = spec
            self._node = node

        def current_player(self) -> int:
            return self._node.player

        def _legal_actions(self, player: int) -> List[int]:
            node = self._node
            if node.legal is None or player < 0:
                return []
            if node.player not in (player, SIMULTANEOUS):
                return []
            return list(node.legal[self._spec.players[player]])

        def chance_outcomes(self) -> List[tuple]:
            node, spec = self._node, self._spec
            if node.player != CHANCE or node.legal is None or spec.random_role is None:
                return []
            legal = node.legal[spec.random_role]
            return [(a, 1.0 / len(legal)) for a in legal]

        def _apply_action(self, action: int) -> None:
            node, spec = self._node, self._spec
            if node.player == CHANCE:
                self._node = spec.draw(node, action)
            elif node.player >= 0:
                self._node = spec.play(node, {spec.players[node.player]: action})
            else:
                raise AdapterError("apply_action at a node where no single player moves", "setting")

        def _apply_actions(self, actions: List[int]) -> None:
            node, spec = self._node, self._spec
            if node.player != SIMULTANEOUS:
                raise AdapterError("apply_actions at a node that is not simultaneous", "setting")
            self._node = spec.play(node, {r: a for r, a in zip(spec.players, actions)})

        def _action_to_string(self, player: int, action: int) -> str:
            spec = self._spec
            role = spec.random_role if player == CHANCE else spec.players[player]
            return spec.move_text(role, action)

        def is_terminal(self) -> bool:
            return self._node.player == TERMINAL

        def returns(self) -> List[float]:
            if self._node.player != TERMINAL:
                return [0.0] * len(self._spec.players)
            return self._spec.goals(self._node)

        def __str__(self) -> str:
            return str(self._node)

        def __reduce__(self) -> tuple:
            return (_restore_state, (pyspiel.serialize_game_and_state(self.get_game(), self),))

    class GdlObserver:
        """OpenSpiel's Python observer protocol (``tensor``, ``dict``,
        ``set_from``, ``string_from``) for a registered GDL game."""

        def __init__(self, spec: Spec, iig_obs_type: Any) -> None:
            self._spec = spec
            self._recall = iig_obs_type.perfect_recall
            self._private = iig_obs_type.private_info != pyspiel.PrivateInfoType.NONE
            self._public = iig_obs_type.public_info
            self._percepts: Optional[List[dict]] = None
            if spec.imperfect_information:
                has_tensor = not self._recall and self._private
                self._percepts = [
                    {text: i for i, text in enumerate(spec.game.possible_percepts(role))} for role in spec.players
                ]
                size = spec.num_actions + max(len(v) for v in self._percepts)
            else:
                has_tensor = not self._recall and self._public
                size = len(spec.bases)
            self.tensor = np.zeros(size, np.float32) if has_tensor else None
            self.dict = {"observation": self.tensor} if has_tensor else {}

        def set_from(self, state: Any, player: int) -> None:
            if self.tensor is None:
                return
            if self._percepts is None:
                self._spec.observation(state._node, self.tensor)
                return
            self.tensor.fill(0.0)
            trail = state._node.trail
            if trail is not None:
                joint, percepts = trail[1]
                role = self._spec.players[player]
                self.tensor[joint[role]] = 1.0
                offset = self._spec.num_actions
                for text in percepts[role] if percepts is not None else ():
                    self.tensor[offset + self._percepts[player][text]] = 1.0

        def string_from(self, state: Any, player: int) -> str:
            spec, node = self._spec, state._node
            if spec.imperfect_information:
                if not self._private:
                    return f"step {node.depth}"
                return spec.private_text(node, player, last_only=not self._recall)
            if not self._public:
                return ""
            if self._recall:
                return spec.history_text(node)
            return " ".join(node.state.facts())

    _CLASSES = (GdlGame, GdlState, GdlObserver)
    return _CLASSES
