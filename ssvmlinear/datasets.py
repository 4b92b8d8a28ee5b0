"""Generated data sets for examples, tests and benchmarks."""
import numpy as np

# The vocabulary of make_entity_sentences: name parts are drawn from syllables, so that test
# sentences hold names never seen in training (a tagger must use context and word shape).
_SYLLABLES = ["ka", "ren", "mo", "li", "san", "dor", "vel", "ta", "bri", "no", "gun", "el", "ro", "sa",
              "mi", "ther", "an", "vo", "lu", "des", "pa", "rin", "go", "te"]
_ORG_SUFFIXES = ["Inc", "Corp", "Group", "Bank", "Airlines", "Labs", "Holdings"]
_LOC_HEADS = ["New", "Port", "San", "North", "Lake", "Fort"]
_MISC = ["Olympics", "Grammy", "Nobel", "Euro", "Oscars", "Marathon"]
_TEMPLATES = [
    "{PER} lives in {LOC} .",
    "{PER} works for {ORG} in {LOC} .",
    "{ORG} hired {PER} last year .",
    "the mayor of {LOC} met {PER} on monday .",
    "shares of {ORG} fell after {PER} resigned .",
    "{PER} won the {MISC} in {LOC} .",
    "{ORG} opened an office in {LOC} .",
    "according to {PER} , {ORG} will expand to {LOC} .",
    "fans in {LOC} watched the {MISC} .",
    "{PER} and {PER} founded {ORG} .",
    "the {MISC} will be held in {LOC} next year .",
    "{PER} said the deal with {ORG} is done .",
    "{PER} announced the results .",
    "{ORG} announced the results .",
    "{LOC} announced new rules .",
    "talks between {ORG} and {LOC} ended .",
    "{PER} visited {LOC} and {ORG} .",
]
_FILLERS = ["today", "reportedly", "again", "finally", "also", "quietly", "still"]


def _name(rng, parts):
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


def _entity(rng, kind):
    if kind == "PER":
        return [_name(rng, 2)] + ([_name(rng, 3)] if rng.random() < 0.6 else [])
    if kind == "LOC":
        return ([str(rng.choice(_LOC_HEADS))] if rng.random() < 0.3 else []) + [_name(rng, rng.integers(2, 4))]
    if kind == "ORG":
        return [_name(rng, 2)] + ([str(rng.choice(_ORG_SUFFIXES))] if rng.random() < 0.6 else [])
    return [str(rng.choice(_MISC))] + ([str(rng.integers(1990, 2030))] if rng.random() < 0.5 else [])


def make_entity_sentences(n_sentences=1000, noise=0.2, random_state=None):
    """Generate a named-entity corpus: sentences of words tagged in BIO (IOB2).

    Sentences come from templates with slots for persons (PER), locations (LOC),
    organisations (ORG) and events (MISC); names are drawn from syllables, so that a held-out
    corpus holds names never seen in training and a tagger must use context and word shape.
    Noise: with probability `noise` a sentence gets a filler word inserted, a name lower-cased,
    or a word misspelt.

    Parameters
    ----------
    n_sentences : int, default=1000
        The number of sentences.
    noise : float, default=0.2
        The probability of each kind of noise per sentence, in [0, 1].
    random_state : int, numpy.random.Generator or None, default=None
        The seed of the draw (None: a fresh one).

    Returns
    -------
    sentences : list of list of str
        The words of every sentence.
    tags : list of list of str
        The BIO tag of every word (B-PER, I-PER, B-LOC, ..., O).

    See Also
    --------
    ssvmlinear.metrics.entity_scores : Entity-level scores of predicted tags.

    Examples
    --------
    >>> from ssvmlinear.datasets import make_entity_sentences
    >>> sentences, tags = make_entity_sentences(2, random_state=0)
    >>> len(sentences), all(len(s) == len(t) for s, t in zip(sentences, tags))
    (2, True)
    """
    if not 0.0 <= float(noise) <= 1.0:
        raise ValueError(f"noise must be in [0, 1]; got {noise!r}")
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    sentences, tags = [], []
    for _ in range(int(n_sentences)):
        words, labels = [], []
        for piece in str(rng.choice(_TEMPLATES)).split():
            if piece.startswith("{"):
                kind = piece[1:-1]
                entity = _entity(rng, kind)
                words += entity
                labels += [f"B-{kind}"] + [f"I-{kind}"] * (len(entity) - 1)
            else:
                words.append(piece)
                labels.append("O")
        if rng.random() < noise:                  # a filler word, between entities
            free = [k for k in range(len(words) + 1) if k == len(words) or not labels[k].startswith("I-")]
            at = free[int(rng.integers(len(free)))]
            words.insert(at, str(rng.choice(_FILLERS)))
            labels.insert(at, "O")
        if rng.random() < noise:                  # a lower-cased name
            named = [k for k, t in enumerate(labels) if t != "O"]
            if named:
                k = named[int(rng.integers(len(named)))]
                words[k] = words[k].lower()
        if rng.random() < noise:                  # a misspelt word
            k = int(rng.integers(len(words)))
            if len(words[k]) > 3:
                j = int(rng.integers(len(words[k]) - 1))
                words[k] = words[k][:j] + words[k][j + 1] + words[k][j] + words[k][j + 2:]
        sentences.append(words)
        tags.append(labels)
    return sentences, tags


def word_features(sentence, position):
    """Compute the classic token features of a word in its sentence.

    sklearn-crfsuite's tutorial set: the word lower-cased, its suffixes, its shape (title,
    upper, digit), and the neighbours' words and shape.

    Parameters
    ----------
    sentence : list of str
        The words.
    position : int
        The word's index.

    Returns
    -------
    dict
        Feature name -> str, bool or number, as SequenceVectorizer and ChainSSVM take them.

    Examples
    --------
    >>> from ssvmlinear.datasets import word_features
    >>> sorted(word_features(["John", "runs"], 0).items())[:4]
    [('+1:word.istitle()', False), ('+1:word.lower()', 'runs'), ('BOS', True), ('bias', 1.0)]
    """
    word = sentence[position]
    features = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:], "word[-2:]": word[-2:],
                "word.isupper()": word.isupper(), "word.istitle()": word.istitle(),
                "word.isdigit()": word.isdigit()}
    for offset in (-1, 1):
        k = position + offset
        if 0 <= k < len(sentence):
            features[f"{offset:+d}:word.lower()"] = sentence[k].lower()
            features[f"{offset:+d}:word.istitle()"] = sentence[k].istitle()
        else:
            features["BOS" if offset < 0 else "EOS"] = True
    return features
