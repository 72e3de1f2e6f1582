"""ggpnet.pettingzoo and ggpnet.gymnasium: corpus games through PettingZoo's
API tests and Gymnasium's environment checker, and against Game.next_state."""

import warnings

import numpy as np
import pytest

import ggpnet

from conftest import require_module

require_module("pettingzoo", "pettingzoo")
gymnasium = require_module("gymnasium", "gymnasium")

import ggpnet.gymnasium  # noqa: E402
import ggpnet.pettingzoo  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test, parallel_api_test  # noqa: E402

GDL2 = ["montyhall.gdl", "kriegTTT_4x4.gdl", "meier.gdl", "blind_breakthrough_5x5.gdl"]
MULTI = ["ticTacToe.kif", "connectFour_7x6.kif", "breakthrough.kif", "3pConnectFour.kif",
         "connectFourSimultaneous.kif", "gt_prisoner.kif"]
SINGLE = ["buttons.kif", "hanoi.kif", "eightPuzzle.kif", "maze.kif"]


def passes_quietly(check, *args, allowed=(), **kwargs):
    """Runs a checker; returns its warnings but those about the documented
    dict observations and the roles' names (GDL's, not player_0), and those
    `allowed`."""
    expected = ("Observation is not a NumPy array", "probably should be gymnasium.spaces.box",
                "We recommend agents to be named", *allowed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(*args, **kwargs)
    return [str(w.message) for w in caught if not any(e in str(w.message) for e in expected)]


@pytest.mark.parametrize("name", MULTI)
def test_pettingzoo_api_tests(corpus, name):
    assert passes_quietly(api_test, ggpnet.pettingzoo.env(corpus / "games" / name), num_cycles=400) == []
    parallel = ggpnet.pettingzoo.parallel_env(corpus / "games" / name)
    assert passes_quietly(parallel_api_test, parallel, num_cycles=400) == []


def play_aec(env, seed):
    """A random game through the AEC env, checked against Game.next_state;
    returns the final rewards."""
    game = env.game
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    state = game.initial_state()
    chosen = {}
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        assert np.array_equal(obs["observation"], [f in state.facts() for f in game.bases])
        role = game.role_index(agent)
        legal = {game.actions(role).index(m) for m in game.legal_moves(state, role)}
        mask = set(np.flatnonzero(obs["action_mask"]))
        assert mask == legal
        action = int(rng.choice(sorted(mask)))
        chosen[role] = action
        env.step(action)
        if len(chosen) == len(game.roles) or env.gdl_spec.sequential:
            joint = []
            for r in range(len(game.roles)):
                if r in chosen:
                    joint.append(game.actions(r)[chosen[r]])
                else:
                    (only,) = game.legal_moves(state, r)
                    joint.append(only)
            state = game.next_state(state, joint)
            chosen = {}
    assert game.is_terminal(state)
    assert [totals[a] for a in env.possible_agents] == [float(g) for g in game.goals(state)]
    return totals


@pytest.mark.parametrize("name", ["ticTacToe.kif", "connectFourSimultaneous.kif"])
def test_aec_games_follow_next_state(corpus, name):
    env = ggpnet.pettingzoo.env(corpus / "games" / name)
    for seed in range(5):
        play_aec(env, seed)


def test_a_simultaneous_aec_step_waits_for_every_agent(corpus):
    env = ggpnet.pettingzoo.env(corpus / "games" / "gt_prisoner.kif")
    assert not env.gdl_spec.sequential
    env.reset(seed=0)
    first, second = env.possible_agents
    assert env.agent_selection == first
    before = env.observe(second)
    env.step(int(np.flatnonzero(env.observe(first)["action_mask"])[0]))
    assert env.agent_selection == second
    assert np.array_equal(env.observe(second)["observation"], before["observation"])


def test_parallel_env_steps_and_refusals(corpus):
    env = ggpnet.pettingzoo.parallel_env(corpus / "games" / "ticTacToe.kif")
    obs, infos = env.reset(seed=1)
    # Every agent's mask shows its legal moves (oplayer: noop).
    assert obs["oplayer"]["action_mask"].sum() == 1 and obs["xplayer"]["action_mask"].sum() == 9
    with pytest.raises(ggpnet.IllegalMoveError):
        env.step({"xplayer": 9, "oplayer": 0})  # xplayer's noop is not legal now
    obs, rewards, terminated, truncated, _ = env.step({"xplayer": 4})  # oplayer's noop left out
    assert obs["oplayer"]["action_mask"].sum() == 8 and not any(terminated.values())


def test_truncation_and_seeded_repeats(corpus):
    env = ggpnet.pettingzoo.parallel_env(corpus / "games" / "connectFour_7x6.kif", max_steps=3)
    obs, _ = env.reset(seed=3)
    for step in range(3):
        actions = {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminated, truncated, _ = env.step(actions)
    assert all(truncated.values()) and not any(terminated.values()) and env.agents == []
    aec = ggpnet.pettingzoo.env(corpus / "games" / "connectFour_7x6.kif", illegal_action="random")
    runs = []
    for _ in range(2):
        aec.reset(seed=7)
        for agent in aec.agent_iter(30):
            _, _, terminated, truncated, _ = aec.last()
            aec.step(None if terminated or truncated else 0)  # often illegal: drawn instead
        runs.append(aec.state().tolist())
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name", SINGLE)
def test_gymnasium_env_checker(corpus, name):
    env = gymnasium.make(ggpnet.gymnasium.ENV_ID, source=corpus / "games" / name, illegal_action="random")
    assert passes_quietly(check_env, env.unwrapped) == []
    assert passes_quietly(check_env, ggpnet.gymnasium.GdlEnv(corpus / "games" / name, illegal_action="random")) \
        == ["\x1b[33mWARN: Not able to test alternative render modes due to the environment not having a spec. "
            "Try instantiating the environment through `gymnasium.make`\x1b[0m"]


def test_gymnasium_episodes_follow_next_state(corpus):
    env = ggpnet.gymnasium.GdlEnv(corpus / "games" / "hanoi.kif", render_mode="ansi")
    game = env.game
    obs, info = env.reset(seed=0)
    assert np.array_equal(obs["action_mask"], info["action_mask"])
    state, total, done = game.initial_state(), 0.0, False
    while not done:
        assert np.array_equal(obs["observation"], [f in state.facts() for f in game.bases])
        action = env.action_space.sample(mask=obs["action_mask"])
        state = game.next_state(state, [game.actions(0)[action]])
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
    assert terminated == game.is_terminal(state) and env.render() == "\n".join(state.facts())
    assert total == (game.goals(state)[0] if terminated else 0)
    with pytest.raises(ggpnet.AdapterError):
        env.step(0)
    strict = ggpnet.gymnasium.GdlEnv(corpus / "games" / "hanoi.kif")
    obs, _ = strict.reset()
    with pytest.raises(ggpnet.IllegalMoveError):
        strict.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    with pytest.raises(ggpnet.AdapterError) as refused:
        ggpnet.gymnasium.GdlEnv(corpus / "games" / "ticTacToe.kif")
    assert refused.value.kind == "roles"


@pytest.mark.parametrize("name", GDL2)
def test_gdl2_pettingzoo_api_tests(corpus, name):
    # Before the first joint move no percept has been received: the documented
    # all-zero observation, which api_test remarks on.
    zeros = ("Observation numpy array is all zeros.",)
    aec = ggpnet.pettingzoo.env(corpus / "games-gdl2" / name)
    assert passes_quietly(api_test, aec, num_cycles=200, allowed=zeros) == []
    parallel = ggpnet.pettingzoo.parallel_env(corpus / "games-gdl2" / name)
    assert passes_quietly(parallel_api_test, parallel, num_cycles=200) == []


def percepts_per_step(game, steps, players):
    """Replays `steps` (joint actions per role) with Game.next_state and
    Game.percepts: every player's percepts after each joint move, after
    none (empty) at the start."""
    state, out = game.initial_state(), [[set() for _ in players]]
    for actions, _ in steps:
        joint = [game.actions(r)[a] for r, a in enumerate(actions)]
        percepts = game.percepts(state, joint)
        out.append([set(percepts[r]) for r in players])
        state = game.next_state(state, joint)
    return out


@pytest.mark.parametrize("name", ["montyhall.gdl", "kriegTTT_4x4.gdl"])
def test_gdl2_observations_are_the_percepts_of_the_last_joint_move(corpus, name):
    env = ggpnet.pettingzoo.parallel_env(corpus / "games-gdl2" / name)
    game, players = env.game, env.gdl_spec.players
    vocabulary = [game.possible_percepts(r) for r in players]
    assert all(len(v) == env.observation_space(a)["observation"].shape[0]
               for v, a in zip(vocabulary, env.possible_agents))
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        seen = [[{v[i] for i in np.flatnonzero(obs[a]["observation"])} for v, a in zip(vocabulary, env.agents)]]
        while env.agents:
            actions = {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}
            agents = env.agents
            obs, *_ = env.step(actions)
            seen.append([{v[i] for i in np.flatnonzero(obs[a]["observation"])} for v, a in zip(vocabulary, agents)])
        expected = percepts_per_step(game, env._episode.node.steps(), players)
        assert seen == expected
        assert any(any(p) for step in seen for p in step), "the game's percepts were never seen"
    assert not np.array_equal(env.state(), np.zeros(len(game.bases)))


def test_gdl2_single_player_gymnasium(corpus):
    env = ggpnet.gymnasium.GdlEnv(corpus / "games-gdl2" / "montyhall.gdl", illegal_action="random")
    assert env.game.random_role is not None
    assert passes_quietly(check_env, env) == [
        "\x1b[33mWARN: Not able to test alternative render modes due to the environment not having a spec. "
        "Try instantiating the environment through `gymnasium.make`\x1b[0m"]
