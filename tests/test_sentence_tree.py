"""Parse-tree values of groups of query terms (irgrid.features.trees).

The expected values of the hand-parsed sentences below were worked out by hand from the
heads, in the comments next to them, not by running the code.  Heads are written as in
CoNLL (1-based, 0 for the root); tokens are then named by their 0-based index.
"""

from __future__ import annotations

import itertools
import math
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irgrid.collections.dependency_parse import Parse, ParseError
from irgrid.features.trees import (
    ACROSS_TREES,
    GroupValues,
    ParseTree,
    choose_occurrences,
    clique_values,
    occurrences,
    tree_of,
)

INF = math.inf


def conll(tokens: str, heads: list[int]) -> ParseTree:
    words = tokens.split()
    assert len(words) == len(heads)
    return ParseTree(Parse.from_one_based(words, heads, ["dep"] * len(words)))


def check(tree: ParseTree, nodes, connected, distance, height, mean_height, span):
    found = tree.group(nodes)
    assert found.connected is connected, (nodes, found)
    assert found.distance == pytest.approx(distance), (nodes, found)
    assert found.height == pytest.approx(height), (nodes, found)
    assert found.mean_height == pytest.approx(mean_height), (nodes, found)
    assert found.span == pytest.approx(span), (nodes, found)
    # the order of the group's tokens does not matter
    assert tree.group(list(reversed(nodes))) == found


# --------------------------------------------------------------------------------------------
# S1: "the black gang members said prison gangs have a system"
#
#   0 the     -> 4 members (det)        depth 2
#   1 black   -> 4 members (amod)       depth 2
#   2 gang    -> 4 members (compound)   depth 2
#   3 members -> 5 said (nsubj)         depth 1
#   4 said    -> 0 root                 depth 0
#   5 prison  -> 7 gangs (compound)     depth 3
#   6 gangs   -> 8 have (nsubj)         depth 2
#   7 have    -> 5 said (ccomp)         depth 1
#   8 a       -> 10 system (det)        depth 3
#   9 system  -> 8 have (dobj)          depth 2
#
#                 said(4)
#            /               \
#       members(3)          have(7)
#      /    |    \          /     \
#   the(0) black(1) gang(2) gangs(6) system(9)
#                            |        |
#                         prison(5)  a(8)
S1_WORDS = "the black gang members said prison gangs have a system"
S1_HEADS = [4, 4, 4, 5, 0, 7, 8, 5, 10, 8]


@pytest.fixture
def s1() -> ParseTree:
    return conll(S1_WORDS, S1_HEADS)


def test_s1_depths_links_lca(s1):
    assert [s1.depth(t) for t in range(10)] == [2, 2, 2, 1, 0, 3, 2, 1, 3, 2]
    assert s1.max_depth == 3
    assert s1.links(2, 2) == 0
    assert s1.links(2, 3) == 1            # gang -> members
    assert s1.links(1, 2) == 2            # black - members - gang
    assert s1.links(2, 5) == 5            # gang - members - said - have - gangs - prison
    assert s1.links(5, 2) == 5
    assert s1.links(0, 8) == 5            # the - members - said - have - system - a
    assert s1.links(6, 9) == 2            # gangs - have - system
    assert s1.links(5, 9) == 3            # prison - gangs - have - system
    assert s1.lca([2, 3]) == 3            # members heads gang
    assert s1.lca([1, 2]) == 3
    assert s1.lca([2, 5]) == 4            # said
    assert s1.lca([5, 6, 9]) == 7         # have
    assert s1.lca([8]) == 8
    assert s1.lca([0, 1, 2, 3]) == 3


def test_s1_groups(s1):
    # gang(2), members(3): members heads gang.  links 1; lca members (depth 1);
    # height max(2, 1) - 1 = 1; mean ((2-1) + (1-1)) / 2 = 0.5
    check(s1, [2, 3], True, 1, 1, 0.5, 1)
    # gang(2), prison(5): 5 links; lca said (0); height max(2, 3) = 3; mean (2 + 3) / 2 = 2.5
    check(s1, [2, 5], False, 5, 3, 2.5, 5)
    # black(1), gang(2): siblings under members: 2 links; height 2 - 1 = 1; mean 1
    check(s1, [1, 2], False, 2, 1, 1, 2)
    # the(0), a(8): 5 links; lca said; height max(2, 3) = 3; mean 2.5
    check(s1, [0, 8], False, 5, 3, 2.5, 5)
    # members(3), said(4), have(7): said heads both -> connected.
    # links m-s 1, s-h 1, m-h 2: distance 4/3, span 2; lca said; height 1; mean (1 + 0 + 1) / 3
    check(s1, [3, 4, 7], True, 4 / 3, 1, 2 / 3, 2)
    # prison(5), gangs(6), system(9): only prison -> gangs inside the set (have is not): not connected.
    # links p-g 1, g-s 2, p-s 3: distance 6/3 = 2, span 3; lca have (1);
    # height max(3, 2, 2) - 1 = 2; mean (2 + 1 + 1) / 3 = 4/3
    check(s1, [5, 6, 9], False, 2, 2, 4 / 3, 3)
    # gangs(6), have(7), system(9): gangs -> have and system -> have: 2 edges for 3 tokens, connected.
    # links 1, 1, 2: distance 4/3, span 2; lca have; height 1; mean (1 + 0 + 1) / 3
    check(s1, [6, 7, 9], True, 4 / 3, 1, 2 / 3, 2)
    # gang(2) twice (a token carrying two terms) and prison(5): pairs (2,2) 0, (2,5) 5, (2,5) 5:
    # distance 10/3, span 5; lca said; height 3; mean (2 + 2 + 3) / 3 = 7/3; distinct {2, 5} not connected
    check(s1, [2, 2, 5], False, 10 / 3, 3, 7 / 3, 5)
    # members(3) twice: one distinct token, connected, all 0
    check(s1, [3, 3], True, 0, 0, 0, 0)
    # a single token
    check(s1, [8], True, 0, 0, 0, 0)
    # the whole left subtree: 3 edges for 4 tokens.  links: the leaves to members 1 each (3),
    # the leaves to each other 2 each (3 pairs: 6): 9 / 6 = 1.5; span 2; lca members; height 1;
    # mean (1 + 1 + 1 + 0) / 4 = 0.75
    check(s1, [0, 1, 2, 3], True, 1.5, 1, 0.75, 2)


# --------------------------------------------------------------------------------------------
# S2: a chain of 11 tokens w0 .. w10: token i's head is token i - 1 (CoNLL head i), token 0 the root.
# So depth(i) = i, links(a, b) = |a - b|, lca = the smaller index.
CHAIN_HEADS = [0] + list(range(1, 11))


@pytest.fixture
def chain() -> ParseTree:
    return conll(" ".join(f"w{i}" for i in range(11)), CHAIN_HEADS)


def test_chain(chain):
    assert [chain.depth(t) for t in range(11)] == list(range(11))
    assert chain.links(1, 4) == 3
    assert chain.lca([4, 9, 6]) == 4
    # 1, 4: 3 links; lca 1; height 4 - 1 = 3; mean (0 + 3) / 2 = 1.5
    check(chain, [1, 4], False, 3, 3, 1.5, 3)
    # 2, 3, 4: connected; links 1, 1, 2 -> 4/3; lca 2; height 2; mean (0 + 1 + 2) / 3 = 1
    check(chain, [2, 3, 4], True, 4 / 3, 2, 1, 2)
    # 0, 10: 10 links; height 10; mean 5
    check(chain, [0, 10], False, 10, 10, 5, 10)
    # 3, 5, 7: links 2, 2, 4 -> 8/3; lca 3; height 4; mean (0 + 2 + 4) / 3 = 2
    check(chain, [3, 5, 7], False, 8 / 3, 4, 2, 4)
    # 5, 7, 8: links 2, 3, 1 -> 2; lca 5; height 3; mean (0 + 2 + 3) / 3 = 5/3; 7 -> 8 only: not connected
    check(chain, [5, 7, 8], False, 2, 3, 5 / 3, 3)


# --------------------------------------------------------------------------------------------
# S3: a star "dogs cats birds sing loudly today here": sing (token 3) heads every other token.
#   depth(3) = 0, every other token depth 1; two leaves are 2 links apart.
STAR_WORDS = "dogs cats birds sing loudly today here"
STAR_HEADS = [4, 4, 4, 0, 4, 4, 4]


@pytest.fixture
def star() -> ParseTree:
    return conll(STAR_WORDS, STAR_HEADS)


def test_star(star):
    assert [star.depth(t) for t in range(7)] == [1, 1, 1, 0, 1, 1, 1]
    assert star.links(0, 6) == 2
    assert star.lca([0, 6]) == 3
    # two leaves: 2 links; lca the centre; height 1; mean 1
    check(star, [0, 6], False, 2, 1, 1, 2)
    # leaf and centre: connected; 1 link; height 1; mean (1 + 0) / 2
    check(star, [0, 3], True, 1, 1, 0.5, 1)
    # three leaves: 2 links each -> 2; span 2; height 1; mean 1
    check(star, [0, 1, 2], False, 2, 1, 1, 2)
    # two leaves and the centre: connected; links 1, 1, 2 -> 4/3; height 1; mean 2/3
    check(star, [0, 3, 6], True, 4 / 3, 1, 2 / 3, 2)


# --------------------------------------------------------------------------------------------
# S4: a forest, "He left . She stayed home ." read as two sentences:
#   0 He     -> 2 left      depth 1          3 She    -> 5 stayed   depth 1
#   1 left   -> 0 root      depth 0          4 stayed -> 0 root     depth 0
#   2 .      -> 2 left      depth 1          5 home   -> 5 stayed   depth 1
#                                            6 .      -> 5 stayed   depth 1
FOREST_WORDS = "He left . She stayed home ."
FOREST_HEADS = [2, 0, 2, 5, 0, 5, 5]


@pytest.fixture
def forest() -> ParseTree:
    return conll(FOREST_WORDS, FOREST_HEADS)


def test_forest(forest):
    assert [forest.depth(t) for t in range(7)] == [1, 0, 1, 1, 0, 1, 1]
    assert forest.links(0, 2) == 2
    assert forest.links(0, 5) == INF
    assert forest.links(1, 4) == INF
    assert forest.lca([1, 4]) is None
    assert forest.lca([3, 5, 6]) == 4
    # He, .: siblings under left: 2 links; height 1; mean 1
    check(forest, [0, 2], False, 2, 1, 1, 2)
    # She, stayed, home: connected; links 1, 1, 2 -> 4/3; lca stayed; height 1; mean 2/3
    check(forest, [3, 4, 5], True, 4 / 3, 1, 2 / 3, 2)
    # across the two trees: not connected, every number inf
    assert forest.group([0, 5]) == ACROSS_TREES
    assert forest.group([1, 4]) == GroupValues(False, INF, INF, INF, INF)
    assert forest.group([3, 4, 0]) == ACROSS_TREES  # one token in the other tree is enough


# --------------------------------------------------------------------------------------------
# S5: "the company that built the bridge moved its offices to a city"
#   0 the     -> 2 company (det)      depth 2
#   1 company -> 7 moved (nsubj)      depth 1
#   2 that    -> 4 built (nsubj)      depth 3
#   3 built   -> 2 company (relcl)    depth 2
#   4 the     -> 6 bridge (det)       depth 4
#   5 bridge  -> 4 built (dobj)       depth 3
#   6 moved   -> 0 root               depth 0
#   7 its     -> 9 offices (poss)     depth 2
#   8 offices -> 7 moved (dobj)       depth 1
#   9 to      -> 7 moved (prep)       depth 1
#  10 a       -> 12 city (det)        depth 3
#  11 city    -> 10 to (pobj)         depth 2
S5_WORDS = "the company that built the bridge moved its offices to a city"
S5_HEADS = [2, 7, 4, 2, 6, 4, 0, 9, 7, 7, 12, 10]


@pytest.fixture
def s5() -> ParseTree:
    return conll(S5_WORDS, S5_HEADS)


def test_s5(s5):
    assert [s5.depth(t) for t in range(12)] == [2, 1, 3, 2, 4, 3, 0, 2, 1, 1, 3, 2]
    assert s5.lca([2, 5]) == 3          # that, bridge: both under built
    assert s5.lca([0, 4]) == 1          # the -> company; the -> bridge -> built -> company
    assert s5.lca([4]) == 4
    assert s5.lca([10, 7]) == 6
    # the(4), a(10): the-bridge-built-company-moved-to-city-a: 7 links; lca moved;
    # height max(4, 3) = 4; mean (4 + 3) / 2 = 3.5
    assert s5.links(4, 10) == 7
    check(s5, [4, 10], False, 7, 4, 3.5, 7)
    # bridge(5), city(11): bridge-built-company-moved-to-city: 5 links; lca moved; height 3; mean 2.5
    check(s5, [5, 11], False, 5, 3, 2.5, 5)
    # company(1), bridge(5): bridge-built-company: 2; lca company (1); height 3 - 1 = 2; mean (0 + 2) / 2 = 1
    check(s5, [1, 5], False, 2, 2, 1, 2)
    # company, built, bridge: a path, connected; links 1, 2, 1 -> 4/3; span 2; lca company;
    # height 2; mean (0 + 1 + 2) / 3 = 1
    check(s5, [1, 3, 5], True, 4 / 3, 2, 1, 2)
    # that(2), bridge(5), offices(8): links that-bridge 2, that-offices 4 (that-built-company-moved-offices),
    # bridge-offices 4: 10/3; span 4; lca moved; height 3; mean (3 + 3 + 1) / 3 = 7/3
    check(s5, [2, 5, 8], False, 10 / 3, 3, 7 / 3, 4)
    # moved(6), to(9), city(11): a path down from the root, connected; links 1, 2, 1 -> 4/3;
    # height 2; mean (0 + 1 + 2) / 3 = 1
    check(s5, [6, 9, 11], True, 4 / 3, 2, 1, 2)


def test_bad_input(s1):
    with pytest.raises(IndexError):
        s1.depth(10)
    with pytest.raises(IndexError):
        s1.links(-1, 2)
    with pytest.raises(ValueError):
        s1.group([])
    with pytest.raises(ValueError):
        s1.lca([])
    with pytest.raises(ParseError):
        ParseTree.from_heads([1, 0])  # a cycle
    with pytest.raises(ValueError):
        clique_values(s1, [()] * 9, ["gang"])  # 9 tokens' terms for 10 tokens
    with pytest.raises(ValueError):
        clique_values(s1, [()] * 10, [])


def test_from_heads_and_cache():
    tree = ParseTree.from_heads([3, 3, 3, 4, -1, 6, 7, 4, 9, 7])
    assert tree.heads == tuple(h - 1 for h in S1_HEADS)
    assert len(tree) == 10
    parse = Parse.from_one_based(S1_WORDS.split(), S1_HEADS, ["dep"] * 10)
    assert tree_of(parse) is tree_of(parse)
    assert tree_of(parse).group([5, 6, 9]) == tree.group([5, 6, 9])
    empty = ParseTree.from_heads([])
    assert empty.max_depth == -1


# --------------------------------------------------------------------------------------------
# Choosing occurrences.  S1's tokens analyzed (stemmed, stop words dropped): "gang" at 2 and 6.
S1_TERMS = ((), ("black",), ("gang",), ("member",), ("said",), ("prison",), ("gang",), ("have",), (),
            ("system",))


def test_occurrences():
    assert occurrences(S1_TERMS, "gang") == [2, 6]
    assert occurrences(S1_TERMS, "prison") == [5]
    assert occurrences(S1_TERMS, "jail") == []
    assert occurrences([("bye", "bye"), ("bye",)], "bye") == [0, 1]


def test_repeated_term_in_sentence(s1):
    # gang at 2 or 6, prison at 5: (2, 5) 5 links, (6, 5) 1 link -> gangs(6), prison(5):
    # connected (prison -> gangs); lca gangs (2); height 3 - 2 = 1; mean (1 + 0) / 2
    assert choose_occurrences(s1, S1_TERMS, ["gang", "prison"]) == (6, 5)
    assert clique_values(s1, S1_TERMS, ["gang", "prison"]) == GroupValues(True, 1.0, 1.0, 0.5, 1.0)
    # gang, system: (2, 9) 4 links, (6, 9) 2 -> gangs, system: lca have; height 1; mean 1
    assert choose_occurrences(s1, S1_TERMS, ["system", "gang"]) == (9, 6)
    assert clique_values(s1, S1_TERMS, ["gang", "system"]) == GroupValues(False, 2.0, 1.0, 1.0, 2.0)
    # gang, said: (2, 4) gang-members-said and (6, 4) gangs-have-said: both 2 links, height 2, mean 1;
    # a tie broken by the sorted tokens: (2, 4) < (4, 6)
    assert choose_occurrences(s1, S1_TERMS, ["gang", "said"]) == (2, 4)
    assert choose_occurrences(s1, S1_TERMS, ["said", "gang"]) == (4, 2)
    assert clique_values(s1, S1_TERMS, ["gang", "said"]) == GroupValues(False, 2.0, 2.0, 1.0, 2.0)
    # three terms: black(1) with gang 2 or 6 and member(3): (1, 2, 3) links 2, 1, 1 -> 4/3 connected;
    # (1, 6, 3): black-gangs 4 (black-members-said-have-gangs) -> worse
    assert choose_occurrences(s1, S1_TERMS, ["black", "gang", "member"]) == (1, 2, 3)
    assert clique_values(s1, S1_TERMS, ["black", "gang", "member"]) == GroupValues(True, 4 / 3, 1.0, 2 / 3, 2.0)


def test_absent_term(s1):
    assert clique_values(s1, S1_TERMS, ["gang", "jail"]) is None
    assert choose_occurrences(s1, S1_TERMS, ["jail"]) is None
    assert clique_values(s1, [()] * 10, ["gang"]) is None


def test_repeated_query_term(s1):
    # a clique repeating "gang": (2, 2) and (6, 6) both 0 apart (the same token may serve both copies,
    # as #uwN(a a) may match one occurrence twice); tie -> sorted (2, 2)
    assert choose_occurrences(s1, S1_TERMS, ["gang", "gang"]) == (2, 2)
    assert clique_values(s1, S1_TERMS, ["gang", "gang"]) == GroupValues(True, 0.0, 0.0, 0.0, 0.0)
    # gang, prison, gang: the two copies both at gangs(6) with prison(5): pairs 1, 1, 0 -> 2/3; span 1;
    # lca gangs; height 1; mean (0 + 1 + 0) / 3
    assert choose_occurrences(s1, S1_TERMS, ["gang", "prison", "gang"]) == (6, 5, 6)
    assert clique_values(s1, S1_TERMS, ["gang", "prison", "gang"]) == GroupValues(True, 2 / 3, 1.0, 1 / 3, 1.0)
    # one occurrence is enough for the repeated clique to co-occur
    assert clique_values(s1, S1_TERMS, ["prison", "prison"]) == GroupValues(True, 0.0, 0.0, 0.0, 0.0)


# "she moved to new-york city": 0 she -> 2 moved; 1 moved root; 2 to -> 2; 3 new-york -> 5 city;
# 4 city -> 3 to.  Depths: she 1, moved 0, to 1, new-york 3, city 2.
NY_WORDS = "she moved to new-york city"
NY_HEADS = [2, 0, 2, 5, 3]
NY_TERMS = ((), ("move",), (), ("new", "york"), ("city",))


def test_token_with_two_terms():
    tree = conll(NY_WORDS, NY_HEADS)
    assert [tree.depth(t) for t in range(5)] == [1, 0, 1, 3, 2]
    # new, york both at token 3: one distinct token
    assert choose_occurrences(tree, NY_TERMS, ["new", "york"]) == (3, 3)
    assert clique_values(tree, NY_TERMS, ["new", "york"]) == GroupValues(True, 0.0, 0.0, 0.0, 0.0)
    # new, york, city: (3, 3, 4): pairs 0, 1, 1 -> 2/3; span 1; lca city (depth 2); height 3 - 2 = 1;
    # mean (1 + 1 + 0) / 3 = 2/3; distinct {3, 4} with new-york -> city: connected
    assert clique_values(tree, NY_TERMS, ["new", "york", "city"]) == GroupValues(True, 2 / 3, 1.0, 2 / 3, 1.0)
    # move, york: moved-to-city-new-york 3 links; lca moved; height 3; mean (0 + 3) / 2
    assert clique_values(tree, NY_TERMS, ["move", "york"]) == GroupValues(False, 3.0, 3.0, 1.5, 3.0)


def test_cap_greedy(chain):
    # on the chain (links |a - b|, depth = index): x at 5, y at 3 or 8, z at 7 or 10.  4 combinations.
    terms = [()] * 11
    terms[5], terms[3], terms[8], terms[7], terms[10] = ("x",), ("y",), ("y",), ("z",), ("z",)
    clique = ["x", "y", "z"]
    # exhaustive: (5, 3, 7) links 2 + 2 + 4 = 8; (5, 3, 10) 2 + 5 + 7 = 14; (5, 8, 7) 3 + 2 + 1 = 6;
    # (5, 8, 10) 3 + 5 + 2 = 10 -> (5, 8, 7): distance 2, lca 5, height 8 - 5 = 3, mean (0 + 3 + 2) / 3
    assert choose_occurrences(chain, terms, clique, cap=4) == (5, 8, 7)
    assert clique_values(chain, terms, clique, cap=4) == GroupValues(False, 2.0, 3.0, 5 / 3, 3.0)
    # greedy (4 > cap 3): pivot x (one occurrence); y nearest to 5 is 3 (2 links, 8 is 3), z nearest is 7
    # (2 links, 10 is 5) -> (5, 3, 7): distance 8/3, lca 3, height 7 - 3 = 4, mean (2 + 0 + 4) / 3 = 2
    assert choose_occurrences(chain, terms, clique, cap=3) == (5, 3, 7)
    assert clique_values(chain, terms, clique, cap=3) == GroupValues(False, 8 / 3, 4.0, 2.0, 4.0)
    # a pivot with two occurrences: y first in the clique, x absent; z's nearest to 3 is 7 (4 links, 10 is 7),
    # to 8 is 7 (1 link): candidates (3, 7) links 4 and (8, 7) links 1 -> (8, 7)
    assert choose_occurrences(chain, terms, ["y", "z"], cap=1) == (8, 7)
    # a tie in the nearest occurrence goes to the lower token: w at 2 and 8 are both 3 from x at 5
    terms2 = list(terms)
    terms2[2], terms2[8] = ("w",), ("w", "y")
    assert choose_occurrences(chain, terms2, ["x", "w"], cap=1) == (5, 2)


def test_many_combinations_numpy(s1):
    # every token yields "t" and "u": 100 combinations (over _VECTOR_MIN): the numpy path.
    # (t, u) at the same token: 0 apart; the smallest sorted tuple: (0, 0)
    terms = [("t", "u")] * 10
    assert choose_occurrences(s1, terms, ["t", "u"]) == (0, 0)
    # t only at the leaves 0, 1, 2, 5, 8; u everywhere: best is u on the same leaf
    terms = [("t", "u") if i in (0, 1, 2, 5, 8) else ("u",) for i in range(10)]
    assert choose_occurrences(s1, terms, ["u", "t", "u"]) == (0, 0, 0)
    # t at the leaves, u at the inner nodes, v at the leaves: 5 * 5 * 5 = 125 combinations.
    # a leaf and its head are 1 apart: t, v at one leaf and u its head: links 1, 0, 1 -> 2/3, height 1;
    # leaves 0, 1, 2 under members(3), 5 under gangs(6), 8 under system(9): ties on the key -> the lowest
    # sorted tuple (0, 0, 3)
    leaves = (0, 1, 2, 5, 8)
    terms = [("t", "v") if i in leaves else ("u",) for i in range(10)]
    assert choose_occurrences(s1, terms, ["t", "u", "v"]) == (0, 3, 0)
    assert clique_values(s1, terms, ["t", "u", "v"]) == GroupValues(True, 2 / 3, 1.0, 2 / 3, 1.0)


# --------------------------------------------------------------------------------------------
# Property tests on random forests.  Oracles: breadth-first search for links, walking up for depths.

@st.composite
def trees(draw, max_size: int = 24) -> ParseTree:
    n = draw(st.integers(1, max_size))
    heads = [-1] + [draw(st.integers(-1, i - 1)) for i in range(1, n)]
    order = draw(st.permutations(range(n)))  # relabel: token i becomes order[i]
    relabelled = [0] * n
    for old, head in enumerate(heads):
        relabelled[order[old]] = -1 if head == -1 else order[head]
    return ParseTree.from_heads(relabelled)


def bfs_links(tree: ParseTree, a: int) -> list[float]:
    neighbours = [[] for _ in range(tree.n)]
    for t, head in enumerate(tree.heads):
        if head >= 0:
            neighbours[t].append(head)
            neighbours[head].append(t)
    found = [INF] * tree.n
    found[a] = 0
    queue = deque([a])
    while queue:
        node = queue.popleft()
        for other in neighbours[node]:
            if found[other] == INF:
                found[other] = found[node] + 1
                queue.append(other)
    return found


def walk_depth(tree: ParseTree, t: int) -> int:
    depth = 0
    while tree.heads[t] >= 0:
        t, depth = tree.heads[t], depth + 1
    return depth


def ancestors(tree: ParseTree, t: int) -> list[int]:
    out = [t]
    while tree.heads[t] >= 0:
        t = tree.heads[t]
        out.append(t)
    return out


def oracle_group(tree: ParseTree, nodes) -> GroupValues:
    """The module docstring's definitions, computed the slow way."""
    m = len(nodes)
    pairs = [bfs_links(tree, nodes[i])[nodes[j]] for i in range(m) for j in range(i + 1, m)]
    if any(p == INF for p in pairs):
        return ACROSS_TREES
    common = set(ancestors(tree, nodes[0]))
    for t in nodes[1:]:
        common &= set(ancestors(tree, t))
    lca = max(common, key=lambda a: walk_depth(tree, a))
    depths = [walk_depth(tree, t) - walk_depth(tree, lca) for t in nodes]
    distinct = set(nodes)
    # connected: a search from one distinct token along edges inside the set reaches all of them
    start = next(iter(distinct))
    seen, stack = {start}, [start]
    while stack:
        node = stack.pop()
        for other in distinct:
            if other not in seen and (tree.heads[other] == node or tree.heads[node] == other):
                seen.add(other)
                stack.append(other)
    return GroupValues(connected=seen == distinct, distance=sum(pairs) / len(pairs) if pairs else 0.0,
                       height=float(max(depths)), mean_height=sum(depths) / m, span=float(max(pairs, default=0)))


def same(a: GroupValues, b: GroupValues) -> bool:
    return a.connected == b.connected and all(
        getattr(a, f) == pytest.approx(getattr(b, f)) for f in ("distance", "height", "mean_height", "span"))


@settings(max_examples=150, deadline=None)
@given(trees())
def test_links_and_depths_against_bfs(tree):
    for a in range(tree.n):
        assert tree.depth(a) == walk_depth(tree, a)
        reference = bfs_links(tree, a)
        assert [tree.links(a, b) for b in range(tree.n)] == reference


@settings(max_examples=150, deadline=None)
@given(trees())
def test_link_properties(tree):
    n = tree.n
    for a in range(n):
        assert tree.links(a, a) == 0
        if tree.heads[a] >= 0:
            assert tree.links(a, tree.heads[a]) == 1
        for b in range(n):
            assert tree.links(a, b) == tree.links(b, a)
            adjacent = tree.heads[a] == b or tree.heads[b] == a
            assert (tree.links(a, b) == 1) == adjacent
            # a pair is connected exactly when it is one link apart (or one token)
            assert tree.group([a, b]).connected == (adjacent or a == b)
            for c in range(0, n, max(1, n // 6)):
                assert tree.links(a, c) <= tree.links(a, b) + tree.links(b, c)


@st.composite
def trees_and_groups(draw):
    tree = draw(trees())
    nodes = draw(st.lists(st.integers(0, tree.n - 1), min_size=1, max_size=5))
    return tree, nodes


@settings(max_examples=300, deadline=None)
@given(trees_and_groups())
def test_group_properties(case):
    tree, nodes = case
    found = tree.group(nodes)
    assert same(found, oracle_group(tree, nodes))
    lca = tree.lca(nodes)
    if found.distance == INF:
        assert lca is None and not found.connected
        assert found.height == found.mean_height == found.span == INF
        return
    common = set.intersection(*(set(ancestors(tree, t)) for t in nodes))
    assert lca == max(common, key=tree.depth)
    assert 0 <= found.height <= tree.max_depth
    assert 0 <= found.mean_height <= found.height
    assert found.distance <= found.span
    assert tree.group(sorted(nodes)) == found
    if lca in nodes:
        depths = [tree.depth(t) for t in nodes]
        assert found.height == max(depths) - min(depths)
    if found.connected:
        # a token adjacent to the group (its head, or a dependent of one of its tokens) keeps it connected
        inside = set(nodes)
        adjacent = {tree.heads[t] for t in inside if tree.heads[t] >= 0}
        adjacent |= {t for t in range(tree.n) if tree.heads[t] in inside}
        for extra in adjacent:
            assert tree.group(nodes + [extra]).connected
    # adding the group's lca makes the height the largest depth below it, and keeps the lca
    assert tree.lca(nodes + [lca]) == lca
    assert tree.group(nodes + [lca]).height == found.height


@st.composite
def sentences_and_cliques(draw):
    tree = draw(trees(max_size=14))
    vocabulary = ["a", "b", "c", "d"]
    token_terms = [tuple(draw(st.lists(st.sampled_from(vocabulary), max_size=2))) for _ in range(tree.n)]
    clique = draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=4))
    return tree, token_terms, clique


@settings(max_examples=300, deadline=None)
@given(sentences_and_cliques())
def test_choice_is_the_exhaustive_minimum(case):
    tree, token_terms, clique = case
    lists = [occurrences(token_terms, term) for term in clique]
    chosen = choose_occurrences(tree, token_terms, clique)
    if any(not options for options in lists):
        assert chosen is None and clique_values(tree, token_terms, clique) is None
        return
    assert all(token in options for token, options in zip(chosen, lists))

    def key(tokens):
        values = oracle_group(tree, list(tokens))
        return (values.distance, values.height, values.mean_height, tuple(sorted(tokens)))

    combinations = list(itertools.product(*lists))
    best = min(combinations, key=key)
    assert key(chosen) == key(best)
    assert same(clique_values(tree, token_terms, clique), oracle_group(tree, list(best)))
    # numpy and plain Python agree on every choice
    assert tree._best_numpy(lists) == tree._best_python(combinations)
    # greedy (cap 0: always): a real combination, never better than the exhaustive one
    greedy = choose_occurrences(tree, token_terms, clique, cap=0)
    assert all(token in options for token, options in zip(greedy, lists))
    assert key(greedy) >= key(best)
    if len(set(clique)) == 1:
        # one term, however often repeated: one token for all copies
        assert len(set(greedy)) == 1 and len(set(chosen)) == 1
