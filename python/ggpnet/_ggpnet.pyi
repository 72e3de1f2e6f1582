"""Type stubs of the extension module ggpnet._ggpnet (re-exported by ggpnet)."""

import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
DEFAULT_GAME: str
"""The built-in game: connect four on a 7x6 board (GDL text)."""
MAX_THREADS: int
"""The most threads playouts may run on."""
MAX_JOINT_MOVES: int
"""The most joint moves `legal_joint_moves` and `successors` list."""

Role = Union[int, str]
"""A role, by number (its index in `Game.roles`) or by name."""
MoveLike = Union["Move", str]
"""A move, as a `Move` or as its KIF text."""
Rng = Union["Stream", int, None]
"""Where random draws come from: a `Stream`, a seed (a new stream), or None
(the game's own stream)."""

class Stream:
    """A random stream (xoshiro256++): number `stream` under `seed`, the
    streams every draw of ggpnet takes."""

    def __init__(self, seed: int = 0, stream: int = 0) -> None: ...
    def draw(self, n: int) -> int:
        """A uniformly random number below `n` (at least 1)."""
    def next_u64(self) -> int:
        """The next 64 random bits."""

class State:
    """A game state: a set of true facts. Immutable, hashable, comparable
    (equal: the same facts of the same game; ordered by their sorted facts),
    printed as its facts in KIF, pickled with its game."""

    @property
    def game(self) -> "Game": ...
    def facts(self) -> List[str]:
        """The true facts, canonical KIF, sorted."""
    def __hash__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __lt__(self, other: "State") -> bool: ...
    def __le__(self, other: "State") -> bool: ...
    def __gt__(self, other: "State") -> bool: ...
    def __ge__(self, other: "State") -> bool: ...

class Move:
    """A move of one role. Immutable, hashable, comparable (by role, then KIF
    text), printed as KIF (`str(move)`), pickled with its game."""

    @property
    def role(self) -> int:
        """The number of the role whose move it is."""
    @property
    def role_name(self) -> str:
        """The name of the role whose move it is."""
    @property
    def game(self) -> "Game": ...
    def __hash__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __lt__(self, other: "Move") -> bool: ...
    def __le__(self, other: "Move") -> bool: ...
    def __gt__(self, other: "Move") -> bool: ...
    def __ge__(self, other: "Move") -> bool: ...

class Playout:
    """How one random playout ended."""

    terminal: bool
    """Whether it ended in a terminal state (else it was abandoned)."""
    depth: int
    """Joint moves played."""
    goals: List[Optional[int]]
    """Per role, its goal in the terminal state; empty when abandoned."""
    state: State
    """The state it ended in."""

class PlayoutReport:
    """What a run of playouts added up to."""

    engine: str
    evaluator: Optional[str]
    threads: int
    seconds: float
    transitions: int
    """Joint moves applied (a playout of d moves counts d)."""
    states: int
    playouts: int
    """Playouts that reached a terminal state."""
    abandoned: int
    at_depth_limit: int
    depth_sum: int
    avg_goals: List[Optional[float]]
    """Per role, its mean goal over the finished playouts that gave it one."""
    goal_sums: List[float]
    """Per role, the sum of its goals over the finished playouts that gave it
    one (whole numbers: the reports of several runs add up exactly)."""
    missing_goals: List[int]
    """Per role, the finished playouts that gave it no goal."""
    @property
    def transitions_per_sec(self) -> float: ...
    @property
    def avg_depth(self) -> float: ...

class Game:
    """A game loaded from GDL (GDL-II, or a Simplified Boardgames game),
    compiled to a propositional network, or run by the reference interpreter
    when grounding passes a limit. Immutable and shareable by threads;
    pickled as its rules and settings."""

    @staticmethod
    def load(
        source: Union[str, "os.PathLike[str]"],
        *,
        format: Optional[str] = None,
        engine: Optional[str] = None,
        evaluator: Optional[str] = None,
        max_playout_depth: Optional[int] = None,
        max_ground_rules: Optional[int] = None,
        max_ground_atoms: Optional[int] = None,
        max_term_depth: Optional[int] = None,
        max_ground_bytes: Optional[int] = None,
        max_join_steps: Optional[int] = None,
        max_ground_time: Optional[float] = None,
        ground_threads: Optional[int] = None,
        native: Optional[bool] = None,
    ) -> "Game":
        """Loads a game from a path (a `PathLike`, or a `str` without a
        parenthesis, a line break or "<<") or from the rules' text. `format`: "gdl", "sbg", or None
        (SBG for a .sbg file). `engine`: "auto" (default: the propnet, or the
        interpreter past a grounding limit), "propnet" or "interpreter".
        `evaluator` of playouts: "auto", "sweep", "differential", "lanes".
        Raises ParseError, GdlError, LimitError, RealTimeGameError, SettingError."""
    @property
    def roles(self) -> List[str]: ...
    def role_index(self, name: str) -> int: ...
    @property
    def engine(self) -> str:
        """ "propnet" or "interpreter"."""
    @property
    def fallback_reason(self) -> Optional[str]: ...
    @property
    def is_gdl2(self) -> bool: ...
    @property
    def random_role(self) -> Optional[int]: ...
    @property
    def rules(self) -> str: ...
    @property
    def settings(self) -> Dict[str, Any]: ...
    @property
    def max_playout_depth(self) -> int:
        """The most joint moves a playout plays (the `max_playout_depth`
        setting, or its default): VectorEnv's default `max_steps`."""
    @property
    def evaluator(self) -> Optional[str]:
        """The evaluator playouts use (calibrated on first use when "auto")."""
    def calibrate(self) -> Optional[Tuple[str, float]]: ...
    @property
    def bases(self) -> List[str]:
        """The base propositions, in the order of VectorEnv's observations
        (EngineError on the interpreter)."""
    def actions(self, role: Role) -> List[Move]:
        """Every move of `role` that can ever be legal: VectorEnv's actions."""
    def possible_percepts(self, role: Role) -> List[str]:
        """Every percept `role` can receive (GDL-II), in a fixed order: the
        environments' observation vocabulary (EngineError on the interpreter)."""
    def initial_state(self) -> State: ...
    def legal_moves(self, state: State, role: Role) -> List[Move]: ...
    def is_terminal(self, state: State) -> bool: ...
    def goals(self, state: State) -> List[Optional[int]]: ...
    def goal_values(self, state: State) -> List[List[int]]: ...
    def next_state(self, state: State, joint: Sequence[MoveLike]) -> State:
        """The state after `joint` (one move per role); IllegalMoveError if a
        move is not legal."""
    def percepts(self, state: State, joint: Sequence[MoveLike]) -> List[List[str]]:
        """Per role, the GDL-II percepts (sees) after `joint` in `state`."""
    def random_move(self, state: State, role: Role, rng: Rng = None) -> Optional[Move]: ...
    def random_joint_move(
        self, state: State, fixed: Optional[Sequence[Optional[MoveLike]]] = None, rng: Rng = None
    ) -> Optional[List[Move]]: ...
    def legal_joint_moves(self, state: State) -> List[List[Move]]: ...
    def successors(self, state: State) -> List[Tuple[List[Move], State]]: ...
    def parse_move(self, role: Role, text: str) -> Move: ...
    def move_to_kif(self, move: Move) -> str: ...
    def state_to_kif(self, state: State) -> List[str]: ...
    def state_from_kif(self, facts: Iterable[str]) -> State: ...
    def perft(
        self, depth: int, evaluator: str = "differential", state: Optional[State] = None
    ) -> List[int]:
        """Joint-move paths of each length 1 to `depth` from `state` (the
        initial state when None); terminal states are not expanded."""
    def playouts(
        self,
        state: Optional[State] = None,
        *,
        playouts: Optional[int] = None,
        seconds: Optional[float] = None,
        threads: Optional[int] = None,
        seed: int = 0,
    ) -> PlayoutReport:
        """Random playouts from `state` on every core (or `threads`), the GIL
        released; exactly one of `playouts` and `seconds`."""
    def playout(self, state: State, rng: Rng = None) -> Playout: ...

class VectorEnv:
    """`n` games side by side for learning. Observations (n x bases, uint8),
    legal-action masks (n x roles x actions, bool), rewards (n x roles,
    float32: the goals when an episode ends), terminated and truncated (n,
    bool) are numpy arrays owned by the environment and written in place by
    each step (copy one to keep it)."""

    def __init__(
        self,
        game: Game,
        n: int,
        *,
        seed: int = 0,
        auto_reset: bool = True,
        max_steps: Optional[int] = None,
        threads: Optional[int] = None,
        evaluator: Optional[str] = None,
    ) -> None: ...
    @property
    def game(self) -> Game: ...
    @property
    def num_envs(self) -> int: ...
    def __len__(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def evaluator(self) -> str:
        """The evaluator steps run on: "lanes", "sweep" or "differential"."""
    @property
    def num_actions(self) -> int: ...
    @property
    def observations(self) -> npt.NDArray[np.uint8]: ...
    @property
    def legal_mask(self) -> npt.NDArray[np.bool_]: ...
    @property
    def rewards(self) -> npt.NDArray[np.float32]: ...
    @property
    def terminated(self) -> npt.NDArray[np.bool_]: ...
    @property
    def truncated(self) -> npt.NDArray[np.bool_]: ...
    def actions(self, role: Role) -> List[Move]: ...
    def reset(self, seed: Optional[int] = None, lanes: Optional[Sequence[int]] = None) -> npt.NDArray[np.uint8]: ...
    def step(
        self, actions: npt.ArrayLike
    ) -> Tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Plays `actions` (n x roles ints; negative: random legal) and
        returns (observations, rewards, terminated, truncated)."""
    def sample_actions(self) -> npt.NDArray[np.int64]: ...
    def state(self, lane: int) -> State: ...
    def set_state(self, lane: int, state: State) -> None: ...

class RtState:
    """A timed state of an RtGame: its (lifetime, fact) pairs."""

    @property
    def game(self) -> "RtGame": ...
    def __hash__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...

class RtGame:
    """A real-time GDL game (facts with lifetimes)."""

    @staticmethod
    def load(
        source: Union[str, "os.PathLike[str]"],
        *,
        engine: Optional[str] = None,
        max_ground_rules: Optional[int] = None,
        max_ground_atoms: Optional[int] = None,
        max_term_depth: Optional[int] = None,
        max_ground_bytes: Optional[int] = None,
        max_join_steps: Optional[int] = None,
        max_ground_time: Optional[float] = None,
    ) -> "RtGame": ...
    @property
    def roles(self) -> List[str]: ...
    @property
    def engine(self) -> str: ...
    @property
    def fallback_reason(self) -> Optional[str]: ...
    @property
    def rules(self) -> str: ...
    def initial_state(self) -> RtState: ...
    def pairs(self, state: RtState) -> List[Tuple[str, str]]: ...
    def legal_moves(self, state: RtState, role: Role) -> List[str]: ...
    def is_terminal(self, state: RtState) -> bool: ...
    def goals(self, state: RtState) -> List[Optional[int]]: ...
    def next_expiry(self, state: RtState) -> Optional[str]: ...
    def update(self, state: RtState, elapsed: Union[str, float], moves: Sequence[Optional[str]]) -> RtState: ...
    def playouts(
        self,
        state: Optional[RtState] = None,
        *,
        playouts: Optional[int] = None,
        seconds: Optional[float] = None,
        threads: Optional[int] = None,
        seed: int = 0,
        time_model: str = "uniform:1",
        max_events: int = 10000,
    ) -> Dict[str, Any]: ...
