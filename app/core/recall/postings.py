"""One archive's word index as a store keeps it compactly: per word, its postings (the
messages that hold it, each with the word's count and first offset) packed in bytes, and
the words packed by bucket.

A row per (word, message) costs a database more than the text it indexes (a tuple header
and the session and archive keys on every row, twice with the primary key). Here the
postings of a word are unsigned LEB128 varints (the gap from the previous message index,
the count, the first offset; messages in ascending order), a few bytes a posting, and the
words of an archive are spread over `BUCKETS` buckets by a stable hash: a store keeps one
row per (bucket, archive), so an archive costs at most `BUCKETS` rows however many words
it has, and a lookup of a word reads its bucket's row of each archive.

A bucket is `>II` (word count n, directory length), the directory (the words, each
between NULs: no folded word holds one), n + 1 `>I` offsets into the postings that
follow, and the postings, words in the directory's order.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence

from app.core.recall.terms import WordStat, word_stats

BUCKETS = 512
_HEAD = struct.Struct(">II")
_OFFSET = struct.Struct(">I")

Posting = tuple[int, WordStat]  # a message index, and the word's count and first offset in it


class PostingsError(ValueError):
    """Bytes that are not postings written by `encode_postings`."""


def postings_by_word(texts: Iterable[tuple[int, str]]) -> dict[str, list[Posting]]:
    """Each word of the (message index, text) pairs, given in ascending index order, with
    its postings in that order."""
    found: dict[str, list[Posting]] = {}
    for index, text in texts:
        for word, stat in word_stats(text).items():
            postings = found.get(word)
            if postings is None:
                found[word] = [(index, stat)]
            else:
                postings.append((index, stat))
    return found


def encode_postings(postings: Sequence[Posting]) -> bytes:
    """The postings, in ascending message order, as bytes."""
    out = bytearray()
    previous = 0
    for index, (times, first) in postings:
        if index < previous:
            raise ValueError("postings must be in ascending message order")
        for value in (index - previous, times, first):
            while value > 0x7F:
                out.append((value & 0x7F) | 0x80)
                value >>= 7
            out.append(value)
        previous = index
    return bytes(out)


def decode_postings(data: bytes) -> list[Posting]:
    """The postings `encode_postings` wrote, in ascending message order."""
    values: list[int] = []
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        values.append(value)
        value = shift = 0
    if shift or len(values) % 3:
        raise PostingsError("postings cut short")
    postings: list[Posting] = []
    index = 0
    for at in range(0, len(values), 3):
        index += values[at]
        postings.append((index, WordStat(values[at + 1], values[at + 2])))
    return postings


def bucket_of(word: str) -> int:
    """The bucket of a word: the same in every process and version (not `hash`)."""
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % BUCKETS


def pack_buckets(found: Mapping[str, Sequence[Posting]]) -> dict[int, bytes]:
    """Each bucket holding a word of `found`, packed."""
    by_bucket: dict[int, list[str]] = {}
    for word in found:
        by_bucket.setdefault(bucket_of(word), []).append(word)
    return {
        bucket: _pack({w: encode_postings(found[w]) for w in words})
        for bucket, words in by_bucket.items()
    }


def _pack(postings: Mapping[str, bytes]) -> bytes:
    words = sorted(postings)
    directory = b"\0" + b"\0".join(w.encode("utf-8", "surrogatepass") for w in words) + b"\0"
    offsets = [0]
    for word in words:
        offsets.append(offsets[-1] + len(postings[word]))
    return b"".join(
        (
            _HEAD.pack(len(words), len(directory)),
            directory,
            b"".join(_OFFSET.pack(o) for o in offsets),
            *(postings[w] for w in words),
        )
    )


def find_postings(bucket: bytes, word: str) -> bytes | None:
    """The packed postings of `word` in a packed bucket; None when it is not there."""
    try:
        count, size = _HEAD.unpack_from(bucket)
        start = _HEAD.size
        at = bucket.find(b"\0" + word.encode("utf-8", "surrogatepass") + b"\0", start, start + size)
        if at < 0:
            return None
        nth = bucket.count(b"\0", start, at)  # the words before it
        table = start + size
        data = table + (count + 1) * _OFFSET.size
        (begin,) = _OFFSET.unpack_from(bucket, table + nth * _OFFSET.size)
        (end,) = _OFFSET.unpack_from(bucket, table + (nth + 1) * _OFFSET.size)
    except struct.error:
        raise PostingsError("bucket cut short") from None
    if nth >= count or begin > end or data + end > len(bucket):
        raise PostingsError("bucket cut short")
    return bucket[data + begin : data + end]


def pack_words(found: Mapping[str, Sequence[Posting]]) -> bytes:
    """All of `found` as one packed bucket (`find_postings` reads it): an index read whole,
    as a file store's is, needs no buckets."""
    return _pack({word: encode_postings(postings) for word, postings in found.items()})
