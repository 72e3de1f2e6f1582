"""The exceptions ggpnet raises, by kind.

Every one is a :class:`ggpnet.Error`; those that refuse an argument are also
:class:`ValueError` (or :class:`LookupError`), so generic handlers catch them
too. The extension module raises them with their attributes set (``line`` and
``column`` of a :class:`ParseError`, ``limit`` and ``value`` of a
:class:`LimitError`, ...); an attribute that does not apply is ``None``.
Exceptions pickle with their attributes.
"""

from typing import Optional


class Error(Exception):
    """Base of every error ggpnet raises."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)

    @property
    def message(self) -> str:
        """The message, as ``str(error)`` gives it."""
        return str(self)


class LoadError(Error):
    """A game that could not be loaded: see the subclasses for the kinds."""


class ParseError(LoadError):
    """Malformed KIF (or a malformed Simplified Boardgames file).

    ``line`` and ``column`` (from 1) say where the reader stopped.
    """

    line: Optional[int] = None
    column: Optional[int] = None


class GdlError(LoadError):
    """Invalid GDL, or a game that cannot be played.

    ``kind`` names the problem (``arity``, ``unsafe``, ``unstratified``,
    ``recursion``, ``keyword``, ``unplayable``, ...); ``line``, ``column`` and
    ``rule`` name the rule to blame, when one is.
    """

    kind: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    rule: Optional[str] = None


class LimitError(LoadError):
    """Grounding passed one of its limits.

    ``limit`` is the setting's name (``max_ground_rules``, ``max_ground_atoms``,
    ``max_term_depth``, ``max_ground_bytes``, ``max_join_steps``,
    ``max_ground_time``, or ``expansion`` for the fixed bound on what one rule's
    ``or`` expands into) and ``value`` its value (milliseconds for the time).
    With ``engine="auto"`` (the default) such a game runs on the interpreter
    instead; ``engine="propnet"`` raises this.
    """

    limit: Optional[str] = None
    value: Optional[int] = None


class RealTimeGameError(LoadError):
    """A real-time GDL game given to :meth:`ggpnet.Game.load`: load it with
    :meth:`ggpnet.RtGame.load`."""


class EngineError(Error):
    """A request that needs the propnet, on a game the interpreter runs
    (base propositions, dense actions, :class:`ggpnet.VectorEnv`)."""


class ForeignStateError(Error, ValueError):
    """A state made by another game."""


class ForeignMoveError(Error, ValueError):
    """A move made by another game."""


class NoSuchRoleError(Error, LookupError):
    """A role number past the game's roles, or a name that is not a role's.

    ``role`` is the number or name given.
    """

    role: object = None


class IllegalMoveError(Error, ValueError):
    """A move that is not legal in the state it is played in.

    ``role`` is the role's name, ``move`` the move's KIF; in
    :meth:`ggpnet.VectorEnv.step`, ``lane`` is the environment's number and
    ``action`` the action's number.
    """

    role: Optional[str] = None
    move: Optional[str] = None
    lane: Optional[int] = None
    action: Optional[int] = None


class UnknownMoveError(Error, ValueError):
    """A move that is never a move of the role (``role``, ``move``)."""

    role: Optional[str] = None
    move: Optional[str] = None


class UnknownFactError(Error, ValueError):
    """A fact that can never hold in the game (``fact``)."""

    fact: Optional[str] = None


class RefusedError(Error, ValueError):
    """Another refused argument: unreadable KIF, a joint move of the wrong
    length, a move played as another role's, an rtGDL update at a wrong time.
    ``kind`` names it."""

    kind: Optional[str] = None


class SettingError(Error, ValueError):
    """A setting out of its range (``setting``, ``reason``)."""

    setting: Optional[str] = None
    reason: Optional[str] = None


class TooManyJointMovesError(Error):
    """More joint moves in a state than :data:`ggpnet.MAX_JOINT_MOVES`
    (``count``)."""

    count: Optional[int] = None


class AdapterError(Error, RuntimeError):
    """A game that an adapter (:mod:`ggpnet.openspiel`,
    :mod:`ggpnet.pettingzoo`, :mod:`ggpnet.gymnasium`) cannot present as it
    declared it, or a request it cannot serve.

    ``kind`` names the problem: ``not_sequential`` (two roles with a real
    choice in a game registered as sequential), ``no_legal_move`` (a role
    without a legal move in a state that is not terminal), ``too_long`` (more
    joint moves than the declared ``max_game_length``), ``no_goal`` (a
    terminal state without a goal for a role), ``goal_range`` (a goal outside
    the declared utility range), ``name_taken`` (a short name registered for
    another game), ``roles`` (a game with the wrong number of roles for the
    adapter), ``setting`` (an argument the adapter refuses).
    """

    kind: Optional[str] = None

    def __init__(self, message: str = "", kind: Optional[str] = None) -> None:
        super().__init__(message)
        self.kind = kind


class PlayoutsError(Error, RuntimeError):
    """Playouts that could not run."""


class InterpreterError(Error, RuntimeError):
    """A refusal or failure of the reference interpreter."""


__all__ = [
    "Error",
    "LoadError",
    "ParseError",
    "GdlError",
    "LimitError",
    "RealTimeGameError",
    "EngineError",
    "ForeignStateError",
    "ForeignMoveError",
    "NoSuchRoleError",
    "IllegalMoveError",
    "UnknownMoveError",
    "UnknownFactError",
    "RefusedError",
    "SettingError",
    "TooManyJointMovesError",
    "PlayoutsError",
    "InterpreterError",
    "AdapterError",
]
