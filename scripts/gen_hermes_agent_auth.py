"""Regenerate the hermes-agent sign-ins the import tests read
(tests/fixtures/hermes_agent/auth/auth.json), written by the real hermes-agent wheel's own
code: its ``_save_codex_tokens``, ``_save_xai_oauth_tokens``, ``_minimax_save_auth_state``
(with the state its MiniMax login builds) and, for Nous Portal, the state its device login
builds, saved with ``_persist_provider_state_to_store``. The tokens are
made up (JWTs whose ``exp`` is far off, not signed): nothing here can sign in anywhere.

    python scripts/gen_hermes_agent_auth.py --python /path/to/venv/bin/python

The venv must have hermes-agent 0.19.0 (``uv pip install hermes-agent==0.19.0``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "hermes_agent" / "auth"

WRITER = r"""
import base64, json
from datetime import datetime, timezone
from pathlib import Path
import hermes_cli.auth as auth

def jwt(claims):
    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none'})}.{part(claims)}.fixture-signature"

far = 4102444800  # 2100-01-01
auth._save_codex_tokens(
    {"access_token": jwt({"exp": far, "sub": "fixture"}), "refresh_token": "rt-codex-fixture"}
)
auth._save_xai_oauth_tokens(
    {"access_token": jwt({"exp": far}), "refresh_token": "rt-xai-fixture",
     "id_token": jwt({"exp": far}), "expires_in": 3600, "token_type": "Bearer"},
    discovery={"token_endpoint": "https://auth.x.ai/oauth2/token"},
)
now = datetime.now(timezone.utc)
state = {
    "portal_base_url": "https://portal.nousresearch.com",
    "inference_base_url": "https://inference-api.nousresearch.com/v1",
    "client_id": "hermes-cli", "scope": "inference:invoke", "token_type": "Bearer",
    "access_token": "at-nous-fixture", "refresh_token": "rt-nous-fixture",
    "obtained_at": now.isoformat(),
    "expires_at": datetime.fromtimestamp(far, tz=timezone.utc).isoformat(),
    "expires_in": 3600, "tls": {"insecure": False, "ca_bundle": None},
    "agent_key": None, "agent_key_id": None, "agent_key_expires_at": None,
    "agent_key_expires_in": None, "agent_key_reused": None, "agent_key_obtained_at": None,
}
auth._persist_provider_state_to_store("nous", state, auth._auth_file_path())
auth._minimax_save_auth_state({
    "provider": "minimax-oauth", "region": "cn",
    "portal_base_url": auth.MINIMAX_OAUTH_CN_BASE,
    "inference_base_url": auth.MINIMAX_OAUTH_CN_INFERENCE,
    "client_id": auth.MINIMAX_OAUTH_CLIENT_ID, "scope": auth.MINIMAX_OAUTH_SCOPE,
    "token_type": "Bearer", "access_token": "at-minimax-fixture",
    "refresh_token": "rt-minimax-fixture", "resource_url": None,
    "obtained_at": now.isoformat(),
    "expires_at": datetime.fromtimestamp(far, tz=timezone.utc).isoformat(),
    "expires_in": 3600,
})
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="a python with hermes-agent 0.19.0")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HERMES_HOME": home}
        subprocess.run([args.python, "-c", WRITER], env=env, check=True)
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(home) / "auth.json", OUT / "auth.json")
    print(f"wrote {OUT / 'auth.json'}")


if __name__ == "__main__":
    main()
