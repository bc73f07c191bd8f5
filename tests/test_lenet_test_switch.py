"""The test-only switch that records a real regression: fc_coalesced falls back to the
uncoalesced layout of fc_opt when PROFGEN_TEST_UNCOALESCED_FC=1, and only then."""

import pytest

from variants.lenet.stages.fc_coalesced import UNCOALESCED_SWITCH, FcCoalesced
from variants.lenet.stages.fc_opt import FcOpt


def test_default_is_coalesced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UNCOALESCED_SWITCH, raising=False)
    assert FcCoalesced().fc_kernels == "coalesced"


@pytest.mark.parametrize("value", ["0", "", "yes"])
def test_other_values_do_not_switch(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(UNCOALESCED_SWITCH, value)
    assert FcCoalesced().fc_kernels == "coalesced"


def test_switch_uses_fc_opt_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UNCOALESCED_SWITCH, "1")
    assert FcCoalesced().fc_kernels == FcOpt.fc_kernels == "specialised"
