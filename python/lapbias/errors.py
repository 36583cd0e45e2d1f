"""Errors a user can cause. The CLI prints their one-line message, never a traceback.

Every message names what is wrong, the rule it breaks and, where there is one, an example row,
so that the user can fix the input without reading code (STYLE.md, house rules).
"""


class LapbiasError(Exception):
    """Base class: an error the user can fix (bad input, bad config, refused confirmation)."""


class ConfigError(LapbiasError):
    """The TOML run configuration is missing, malformed or inconsistent."""


class InputDataError(LapbiasError):
    """The user's panel breaks a rule of the protocol's input format."""


class ModelError(LapbiasError):
    """The model, tokenizer or backend cannot do what a step needs (e.g. a multi-token label)."""


class ParseRateError(LapbiasError):
    """Step 1 sanity check failed: fewer forecasts parsed than the configured minimum."""


class CacheError(LapbiasError):
    """The raw-response cache is missing entries a derived file needs, or is corrupt."""


class CacheWriteError(CacheError):
    """New answers could not be appended to the cache (a full disk, no permission): how many, and where they went."""


class MergeError(LapbiasError):
    """A panel merge changed the row count (protocol Step 3: fail if the merge changes N)."""


class EstimationError(LapbiasError):
    """A regression cannot be estimated as specified (no observations, no variation, ...)."""


class ConfirmationDeclined(LapbiasError):
    """The user did not confirm a query batch (protocol Step 0)."""


class LogprobsUnavailable(ModelError):
    """The endpoint answered without the log-probs a step needs (protocol Step 2: the sampling fallback)."""


class PromptLogprobsUnavailable(ModelError):
    """The endpoint cannot score prompt tokens, so Min-K% is unavailable there (use the recall LAP)."""
