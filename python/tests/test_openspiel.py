"""ggpnet.openspiel: corpus games registered with OpenSpiel and checked by
OpenSpiel's own tests and algorithms, and against its hand-written games."""

import pickle

import numpy as np
import pytest

import ggpnet
import ggpnet.openspiel

from conftest import require_module

pyspiel = require_module("pyspiel", "open_spiel")

# (folder, game): sequential and simultaneous, two and three players, GDL-II
# with `random` (chance nodes) and with `sees` only.
SIM_GAMES = [
    ("games", "ticTacToe.kif"),
    ("games", "connectFour_7x6.kif"),
    ("games", "breakthrough.kif"),
    ("games", "reversi.kif"),
    ("games", "hex.kif"),
    ("games", "englishDraughts.kif"),
    ("games", "chess_200.kif"),
    ("games", "3pConnectFour.kif"),
    ("games", "tictactoe_3player.kif"),
    ("games", "connectFourSimultaneous.kif"),
    ("games", "gt_prisoner.kif"),
    ("games-gdl2", "montyhall.gdl"),
    ("games-gdl2", "meier.gdl"),
    ("games-gdl2", "blind_breakthrough_5x5.gdl"),
]


def loaded(corpus, folder, name, **options):
    return pyspiel.load_game(ggpnet.openspiel.register(corpus / folder / name, **options))


@pytest.mark.parametrize("folder,name", SIM_GAMES)
def test_random_sim_test(corpus, folder, name):
    game = loaded(corpus, folder, name)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    kind = game.get_type()
    print(f"{name}: {kind.dynamics}, {kind.chance_mode}, {kind.information}, {game.num_players()} players")


def test_the_game_types_follow_the_rules(corpus):
    seq, sim = pyspiel.GameType.Dynamics.SEQUENTIAL, pyspiel.GameType.Dynamics.SIMULTANEOUS
    info = pyspiel.GameType.Information
    chance = pyspiel.GameType.ChanceMode
    ttt = loaded(corpus, "games", "ticTacToe.kif")
    assert ttt.get_type().dynamics == seq and ttt.get_type().chance_mode == chance.DETERMINISTIC
    assert ttt.get_type().information == info.PERFECT_INFORMATION
    assert ttt.num_players() == 2 and ttt.num_distinct_actions() == 10
    assert ttt.observation_tensor_size() == len(ggpnet.openspiel.spec("gdl_ticTacToe").bases)
    assert (ttt.min_utility(), ttt.max_utility()) == (0.0, 100.0)
    assert ttt.max_game_length() == ggpnet.openspiel.spec("gdl_ticTacToe").game.max_playout_depth == 10000
    short = ggpnet.openspiel.load(corpus / "games" / "ticTacToe.kif", "ttt_short", max_playout_depth=5)
    assert short.max_game_length() == 5
    state = short.new_initial_state()
    with pytest.raises(ggpnet.AdapterError) as too_long:
        while not state.is_terminal():
            state.apply_action(state.legal_actions()[0])
    assert too_long.value.kind == "too_long"
    assert loaded(corpus, "games", "3pConnectFour.kif").num_players() == 3
    assert loaded(corpus, "games", "connectFourSimultaneous.kif").get_type().dynamics == sim
    meier = loaded(corpus, "games-gdl2", "meier.gdl")
    kind = meier.get_type()
    assert kind.chance_mode == chance.EXPLICIT_STOCHASTIC and kind.information == info.IMPERFECT_INFORMATION
    assert kind.provides_observation_tensor and kind.provides_information_state_string
    # Forced: a simultaneous game cannot be registered as sequential.
    with pytest.raises(ggpnet.AdapterError) as error:
        ggpnet.openspiel.register(corpus / "games" / "gt_prisoner.kif", "gt_seq", dynamics="sequential")
    assert error.value.kind == "not_sequential"
    # But a sequential one can always be simultaneous.
    both = pyspiel.load_game(
        ggpnet.openspiel.register(corpus / "games" / "ticTacToe.kif", "ttt_sim", dynamics="simultaneous")
    )
    assert both.get_type().dynamics == sim
    pyspiel.random_sim_test(both, num_sims=2, serialize=False, verbose=False)


def test_registration_names(corpus):
    path = corpus / "games" / "ticTacToe.kif"
    assert ggpnet.openspiel.register(path) == ggpnet.openspiel.register(path) == "gdl_ticTacToe"
    with pytest.raises(ggpnet.AdapterError) as taken:
        ggpnet.openspiel.register(corpus / "games" / "nim1.kif", "gdl_ticTacToe")
    assert taken.value.kind == "name_taken"
    with pytest.raises(ggpnet.AdapterError):
        ggpnet.openspiel.register(path, "tic_tac_toe")  # OpenSpiel's own
    with pytest.raises(ggpnet.AdapterError):
        ggpnet.openspiel.register(ggpnet.DEFAULT_GAME)  # rules need a name
    assert ggpnet.openspiel.register(ggpnet.DEFAULT_GAME, "builtin_c4") == "builtin_c4"
    with pytest.raises(ggpnet.EngineError):
        ggpnet.openspiel.register(path, "ttt_interp", engine="interpreter")


def test_states_map_to_ggpnet_states(corpus):
    game = loaded(corpus, "games", "ticTacToe.kif")
    spec = ggpnet.openspiel.spec("gdl_ticTacToe")
    state = game.new_initial_state()
    center = [str(m) for m in spec.actions[0]].index("(mark 2 2)")
    assert state.action_to_string(0, center) == "(mark 2 2)"
    state.apply_action(center)
    gstate = ggpnet.openspiel.ggpnet_state(state)
    assert "(cell 2 2 x)" in gstate.facts()
    assert state.current_player() == 1
    assert state.information_state_string(0) == "(mark 2 2) noop"
    copy = pickle.loads(pickle.dumps(state))
    assert str(copy) == str(state) and copy.history() == state.history()
    with pytest.raises(ggpnet.IllegalMoveError):
        state.apply_action(spec.index[1][spec.game.parse_move(1, "(mark 2 2)")])


def test_gdl2_information_states_are_own_moves_and_percepts(corpus):
    game = loaded(corpus, "games-gdl2", "montyhall.gdl")
    state = game.new_initial_state()
    assert state.is_chance_node()  # random hides the car
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 3 and abs(sum(p for _, p in outcomes) - 1) < 1e-12
    state.apply_action(outcomes[0][0])
    assert state.information_state_string(0) == ""  # the hidden car is not seen
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            state.apply_action(state.legal_actions()[0])
            moves += 1  # sequential: a joint move is one player's move
    lines = state.information_state_string(0).splitlines()
    assert len(lines) == moves >= 2
    assert all(line.startswith("does ") for line in lines)
    assert state.observation_string(0) == lines[-1]
    assert state.returns()[0] in (0.0, 100.0)


def test_gdl2_observation_tensors_say_what_the_observation_string_says(corpus):
    game = loaded(corpus, "games-gdl2", "montyhall.gdl")
    spec = ggpnet.openspiel.spec(game.get_type().short_name)
    role = spec.players[0]
    vocabulary = spec.game.possible_percepts(role)
    assert game.observation_tensor_size() == spec.num_actions + len(vocabulary)
    state = game.new_initial_state()
    assert not np.any(state.observation_tensor(0))
    seen = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[-1][0])
            continue
        action = state.legal_actions()[-1]
        state.apply_action(action)
        tensor = np.array(state.observation_tensor(0))
        assert list(np.flatnonzero(tensor[:spec.num_actions])) == [action]
        percepts = sorted(vocabulary[i] for i in np.flatnonzero(tensor[spec.num_actions:]))
        said = f"does {spec.texts[role][action]} sees {' '.join(percepts)}".rstrip()
        assert state.observation_string(0) == said
        seen += len(percepts)
    assert seen > 0, "montyhall's host opens a door: the candidate sees it"


def sequences(game, depth, key=str):
    """The number of action sequences of each length 1..depth from the
    initial state (chance nodes expand to every outcome). States are merged
    by `key` at each length, weighted by how many sequences reach them."""
    layer = {key(game.new_initial_state()): (game.new_initial_state(), 1)}
    counts = []
    for _ in range(depth):
        following = {}
        total = 0
        for state, weight in layer.values():
            if state.is_terminal():
                continue
            for action in state.legal_actions():
                child = state.child(action)
                total += weight
                k = key(child)
                if k in following:
                    following[k] = (following[k][0], following[k][1] + weight)
                else:
                    following[k] = (child, weight)
        if total == 0:
            break
        counts.append(total)
        layer = following
    return counts


def enumerated(game, depth):
    """The same counts by plain enumeration (no merging): a check of the key."""
    counts = [0] * depth

    def walk(state, d):
        if d == depth or state.is_terminal():
            return
        for action in state.legal_actions():
            counts[d] += 1
            walk(state.child(action), d + 1)

    walk(game.new_initial_state(), 0)
    return counts


def test_tic_tac_toe_counts_equal_openspiels_to_the_end(corpus):
    ours = loaded(corpus, "games", "ticTacToe.kif")
    theirs = pyspiel.load_game("tic_tac_toe")
    assert enumerated(ours, 4) == enumerated(theirs, 4)
    counts = sequences(theirs, 20)
    assert len(counts) == 9 and counts[-1] == 127872  # every game ends by move 9
    assert sequences(ours, 20) == counts
    print("tic_tac_toe:", counts)


def test_connect_four_counts_equal_openspiels_to_depth_8(corpus):
    ours = loaded(corpus, "games", "connectFour_7x6.kif")
    theirs = pyspiel.load_game("connect_four")
    assert enumerated(ours, 4) == enumerated(theirs, 4)
    counts = sequences(theirs, 8)
    assert counts[:3] == [7, 49, 343]
    assert sequences(ours, 8) == counts
    print("connect_four:", counts)


# OpenSpiel's other hand-written games that ggpnet's corpus has, each to the
# depth a test of a few seconds affords (states merged by their string at each
# depth): the counts agree with ggpnet's own perft of the same files.
OTHER_GAMES = [
    ("breakthrough.kif", "breakthrough", 3),
    ("reversi.kif", "othello", 5),
    ("hex.kif", "hex(board_size=9)", 2),
    ("chess_200.kif", "chess", 3),
    ("englishDraughts.kif", "checkers", 4),
]


@pytest.mark.parametrize("file,theirs,depth", OTHER_GAMES)
def test_counts_equal_openspiels_other_games(corpus, file, theirs, depth):
    ours = loaded(corpus, "games", file)
    counts = sequences(pyspiel.load_game(theirs), depth)
    assert len(counts) == depth and counts[0] > 1
    assert sequences(ours, depth) == counts
    print(f"{theirs}: {counts}")


def mcts_wins(game, games, simulations):
    """Games OpenSpiel's MCTS bot (random rollouts, `simulations` a move) wins
    against its uniform random bot, seats alternating, seeded by game number."""
    wins = 0
    for number in range(games):
        rollouts = pyspiel.RandomRolloutEvaluator(1, number)
        # uct_c scaled to the returns, goals of 0 to 100.
        mcts = pyspiel.MCTSBot(game, rollouts, 2.0 * 100, simulations, 100, True, number, False)
        seat = number % 2
        random_bot = pyspiel.make_uniform_random_bot(1 - seat, 1000 + number)
        bots = [mcts, random_bot] if seat == 0 else [random_bot, mcts]
        returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, number)
        wins += returns[seat] > returns[1 - seat]
    return wins


def test_mcts_beats_random_at_connect_four(corpus):
    wins = mcts_wins(loaded(corpus, "games", "connectFour_7x6.kif"), 20, 200)
    print(f"MCTS (200 simulations a move) won {wins} of 20 connect four games against random")
    assert wins >= 18


def test_mcts_beats_random_at_breakthrough(corpus):
    wins = mcts_wins(loaded(corpus, "games", "breakthrough.kif"), 4, 100)
    print(f"MCTS (100 simulations a move) won {wins} of 4 breakthrough games against random")
    assert wins >= 3
