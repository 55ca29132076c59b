"""Kubernetes quantities and Go durations: tables of named cases."""

from fractions import Fraction

import pytest

from gangkit.model.errors import ScenarioError
from gangkit.model.quantity import (
    format_cpu,
    format_duration,
    format_memory,
    parse_cpu,
    parse_duration,
    parse_gpus,
    parse_memory,
    parse_quantity,
)

from conftest import case

WHERE = {"obj": "Job team-a/train", "field": "spec.x"}



@pytest.mark.parametrize(
    "text, expected",
    [
        case("plain integer", "8", Fraction(8)),
        case("YAML integer", 8, Fraction(8)),
        case("YAML float is read as its decimal", 0.1, Fraction(1, 10)),
        case("decimal fraction", "1.5", Fraction(3, 2)),
        case("leading dot", ".5", Fraction(1, 2)),
        case("trailing dot", "2.", Fraction(2)),
        case("plus sign", "+3", Fraction(3)),
        case("minus sign", "-2", Fraction(-2)),
        case("milli", "500m", Fraction(1, 2)),
        case("micro", "250u", Fraction(1, 4000)),
        case("nano", "1n", Fraction(1, 10**9)),
        case("kilo is lower-case k", "2k", Fraction(2000)),
        case("mega", "3M", Fraction(3 * 10**6)),
        case("giga", "1G", Fraction(10**9)),
        case("tera", "1T", Fraction(10**12)),
        case("peta", "1P", Fraction(10**15)),
        case("bare E is exa", "1E", Fraction(10**18)),
        case("kibi", "1Ki", Fraction(1024)),
        case("mebi", "256Mi", Fraction(256 * 2**20)),
        case("gibi with decimals", "1.5Gi", Fraction(3 * 2**29)),
        case("tebi", "1Ti", Fraction(2**40)),
        case("pebi", "1Pi", Fraction(2**50)),
        case("exbi", "1Ei", Fraction(2**60)),
        case("exponent", "1e3", Fraction(1000)),
        case("upper-case exponent", "2E3", Fraction(2000)),
        case("negative exponent", "25e-2", Fraction(1, 4)),
        case("explicit positive exponent", "1e+2", Fraction(100)),
    ],
)
def test_parse_quantity_reads_the_kubernetes_grammar_exactly(text, expected):
    assert parse_quantity(text, **WHERE) == expected


@pytest.mark.parametrize(
    "text",
    [
        case("words after the number", "8 GPUs"),
        case("space before the suffix", "16 Gi"),
        case("lower-case binary suffix", "16gi"),
        case("K is not a decimal suffix (k is)", "2K"),
        case("suffix without a number", "Gi"),
        case("empty string", ""),
        case("two dots", "1.2.3"),
        case("exponent without digits", "1e"),
        case("fractional exponent", "1e1.5"),
        case("two suffixes", "1Ki2"),
        case("hexadecimal", "0x10"),
        case("null", None),
        case("boolean", True),
        case("a list", [1]),
        case("infinity", float("inf")),
    ],
)
def test_parse_quantity_rejects_malformed_values_naming_object_and_field(text):
    with pytest.raises(ScenarioError) as info:
        parse_quantity(text, **WHERE)
    message = str(info.value)
    assert message.startswith("Job team-a/train: spec.x: expected a Kubernetes quantity")
    assert repr(text) in message


@pytest.mark.parametrize(
    "text, gpus",
    [
        case("string count", "2", 2),
        case("integer count", 8, 8),
        case("zero", "0", 0),
        case("1000m is one whole GPU", "1000m", 1),
        case("1e1 is ten", "1e1", 10),
    ],
)
def test_parse_gpus_accepts_whole_numbers(text, gpus):
    assert parse_gpus(text, **WHERE) == gpus
    assert isinstance(parse_gpus(text, **WHERE), int)


@pytest.mark.parametrize(
    "text, expected",
    [
        case("half a GPU", "0.5", "must be an integer"),
        case("half a GPU in millis", "500m", "must be an integer"),
        case("YAML float", 1.5, "must be an integer"),
        case("negative count", "-1", "must be greater than or equal to 0"),
        case("not a quantity", "two", "expected a Kubernetes quantity"),
    ],
)
def test_parse_gpus_rejects_fractions_and_negatives_like_the_api_server(text, expected):
    with pytest.raises(ScenarioError, match=expected) as info:
        parse_gpus(text, **WHERE)
    assert "Job team-a/train: spec.x" in str(info.value)


@pytest.mark.parametrize(
    "text, cores",
    [
        case("millicores", "500m", 0.5),
        case("whole cores", "4", 4.0),
        case("YAML float", 0.25, 0.25),
        case("odd millicores", "47500m", 47.5),
    ],
)
def test_parse_cpu_gives_float_cores(text, cores):
    assert parse_cpu(text, **WHERE) == cores


@pytest.mark.parametrize(
    "text, size",
    [
        case("gibibytes", "16Gi", 16 * 2**30),
        case("gigabytes are decimal", "1G", 10**9),
        case("plain bytes", 1024, 1024),
        case("fractions of a byte round up, like Quantity.Value()", "1500m", 2),
        case("exponent", "1e3", 1000),
    ],
)
def test_parse_memory_gives_whole_bytes(text, size):
    assert parse_memory(text, **WHERE) == size


@pytest.mark.parametrize(
    "parse", [case("cpu", parse_cpu), case("memory", parse_memory)]
)
def test_negative_cpu_or_memory_is_an_error(parse):
    with pytest.raises(ScenarioError, match="Job team-a/train: spec.x: must be greater than or equal to 0"):
        parse("-1", **WHERE)


@pytest.mark.parametrize(
    "value, seconds",
    [
        case("integer seconds", 600, 600.0),
        case("float seconds", 1.5, 1.5),
        case("number in a string (annotations are strings)", "600", 600.0),
        case("seconds", "90s", 90.0),
        case("minutes", "10m", 600.0),
        case("hours and minutes", "1h30m", 5400.0),
        case("fractional hours", "1.5h", 5400.0),
        case("milliseconds", "250ms", 0.25),
        case("microseconds", "1500us", 0.0015),
        case("micro sign", "2µs", 2e-6),
        case("nanoseconds", "1000000ns", 0.001),
        case("zero without a unit", "0", 0.0),
        case("explicit plus", "+5s", 5.0),
        case("parts in any order add up", "30m1h", 5400.0),
    ],
)
def test_parse_duration_reads_seconds_and_go_durations(value, seconds):
    assert parse_duration(value, **WHERE) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize(
    "value, expected",
    [
        case("negative number", -5, "expected a duration >= 0"),
        case("negative Go duration", "-10m", "expected a duration >= 0"),
        case("days are not a Go unit", "1d", "Go duration"),
        case("space inside", "5 s", "Go duration"),
        case("upper-case unit", "5S", "Go duration"),
        case("unit without number", "s", "Go duration"),
        case("empty string", "", "Go duration"),
        case("boolean", True, "Go duration"),
        case("null", None, "Go duration"),
        case("not a number", float("nan"), "Go duration"),
    ],
)
def test_parse_duration_rejects_negative_or_malformed_values(value, expected):
    with pytest.raises(ScenarioError, match=expected) as info:
        parse_duration(value, **WHERE)
    assert str(info.value).startswith("Job team-a/train: spec.x: ")


@pytest.mark.parametrize(
    "seconds, text",
    [
        case("zero", 0, "0s"),
        case("seconds", 45, "45s"),
        case("minutes and seconds", 90, "1m30s"),
        case("minutes", 600, "10m"),
        case("hours and minutes", 5400, "1h30m"),
        case("thirty days in hours", 30 * 86400, "720h"),
        case("fractions stay exact", 0.25, "0.25s"),
    ],
)
def test_format_duration_is_read_back_exactly(seconds, text):
    assert format_duration(seconds) == text
    assert parse_duration(text, **WHERE) == seconds


@pytest.mark.parametrize(
    "cores, text",
    [
        case("whole cores", 8.0, "8"),
        case("millicores", 0.5, "500m"),
        case("a tenth", 0.1, "100m"),
        case("not a whole millicore", 1 / 3, repr(1 / 3)),
    ],
)
def test_format_cpu_is_read_back_exactly(cores, text):
    assert format_cpu(cores) == text
    assert parse_cpu(text, **WHERE) == cores


@pytest.mark.parametrize(
    "size, text",
    [
        case("gibibytes", 16 * 2**30, "16Gi"),
        case("mebibytes", 3 * 2**20, "3Mi"),
        case("decimal bytes stay plain", 1000, "1000"),
        case("zero", 0, "0"),
    ],
)
def test_format_memory_is_read_back_exactly(size, text):
    assert format_memory(size) == text
    assert parse_memory(text, **WHERE) == size
