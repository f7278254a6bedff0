"""Reading a config section leniently: unknown keys left out and located, the key a typo
most likely meant, wrong values one line each."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import closest, drop_unknown, fields_at, section_settings


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    port: int = 22
    user: str | None = None


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_parallel: int = Field(default=4, ge=1)
    target: Inner | None = None
    servers: dict[str, Inner] = Field(default_factory=dict)
    hosts: list[Inner] = Field(default_factory=list)


def test_unknown_keys_at_every_level_are_dropped_and_located():
    data = {
        "max_paralel": 2,
        "target": {"prot": 2222},
        "servers": {"a": {"usr": "x", "port": 1}},
        "hosts": [{"port": 1}, {"portt": 2}],
    }
    cleaned, dropped = drop_unknown(Section, data)
    assert sorted(dropped) == sorted(
        [("max_paralel",), ("target", "prot"), ("servers", "a", "usr"), ("hosts", 1, "portt")]
    )
    assert cleaned == {"target": {}, "servers": {"a": {"port": 1}}, "hosts": [{"port": 1}, {}]}
    assert data["max_paralel"] == 2  # the caller's data is left as it was


def test_the_fields_known_where_a_key_was():
    assert fields_at(Section, ()) == ["hosts", "max_parallel", "servers", "target"]
    assert fields_at(Section, ("target",)) == ["port", "user"]
    assert fields_at(Section, ("servers", "a")) == ["port", "user"]
    assert fields_at(Section, ("hosts", 1)) == ["port", "user"]
    assert fields_at(Section, ("nowhere",)) == []


@pytest.mark.parametrize(
    ("word", "meant"),
    [("max_paralel", "max_parallel"), ("Max-Parallel", "max_parallel"), ("zzz", None)],
)
def test_closest(word, meant):
    assert closest(word, ["max_parallel", "target", "servers"]) == meant


def test_section_settings_ignores_unknown_keys_and_names_wrong_values():
    assert section_settings("cron", Section, {"max_paralel": 9}).max_parallel == 4
    assert section_settings("cron", Section, None).max_parallel == 4
    with pytest.raises(ValueError) as raised:
        section_settings("cron", Section, {"max_parallel": 0, "target": {"port": "x"}})
    assert str(raised.value).startswith("cron.max_parallel: Input should be greater than")
    assert "; cron.target.port: Input should be a valid integer" in str(raised.value)
