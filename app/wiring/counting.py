"""Building the counting side of the service from the settings: the cl100k tokenizer behind
its count cache, o200k loaded when first used, the provider's count API and the model
table. Apart from `app.wiring.service` (which builds the whole service from these) so that the
command line's `count` builds only this: no stores, strategies, summarizer or metrics.
"""

from __future__ import annotations

from functools import cache

from app.adapters.lazy_counter import LazyProviderCounter
from app.adapters.o200k_tokenizer import LazyTokenizer, O200kTokenizer
from app.adapters.token_cache import CachingTokenizer
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import MODELS, ModelSpec
from app.core.ports import ProviderCounter, Tokenizer
from app.service.counting import CountingService
from app.settings import Settings


def build_counting(
    settings: Settings, tokenizer: Tokenizer | None = None, o200k: Tokenizer | None = None
) -> CountingService:
    """Counting alone, as the service counts (`tokenizer`: cl100k's unless given)."""
    return CountingService(
        tokenizer=build_tokenizer(settings, tokenizer),
        provider_counter=build_provider_counter(settings),
        o200k=build_o200k(settings, o200k),
        models=model_table(settings),
    )


def model_table(settings: Settings) -> dict[str, ModelSpec]:
    """The built-in models, with `COMPACT_MODELS` added or overriding them."""
    return {**MODELS, **settings.models}


def build_tokenizer(settings: Settings, tokenizer: Tokenizer | None = None) -> Tokenizer:
    """The exact tokenizer, behind the per-message count cache unless it is disabled."""
    base = tokenizer or TiktokenTokenizer()
    if settings.token_cache_entries == 0:
        return base
    return CachingTokenizer(base, settings.token_cache_entries)


def one_shot_tokenizer() -> Tokenizer:
    """cl100k in one lane, for a command that counts its input and exits: a second lane's
    copy of the encoding costs more than splitting its few counts saves."""
    return TiktokenTokenizer(lanes=1)


def build_o200k(settings: Settings, o200k: Tokenizer | None = None) -> Tokenizer:
    """o200k (the process's one copy, loaded when first used unless given), cached."""
    return build_tokenizer(settings, o200k or LazyTokenizer("o200k", shared_o200k))


@cache
def shared_o200k() -> Tokenizer:
    """The o200k encoding, loaded once per process (its file verified on load)."""
    return O200kTokenizer()


def build_provider_counter(settings: Settings) -> ProviderCounter | None:
    """Anthropic's count API when a key is set, built (and its SDK imported) when first
    used: the server loads it at start-up, a command only when asked for its count."""
    key = settings.anthropic_key
    if key is None:
        return None

    def build() -> ProviderCounter:
        from app.adapters.anthropic_counter import AnthropicCounter

        return AnthropicCounter(
            api_key=key.get_secret_value(),
            model=settings.count_model,
            base_url=settings.anthropic_base_url,
            timeout=settings.count_timeout,
        )

    return LazyProviderCounter("anthropic", build, timeout=settings.count_timeout)
