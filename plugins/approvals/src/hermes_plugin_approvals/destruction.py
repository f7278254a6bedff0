"""Rules for destruction that needs no ``rm -r``: wildcards over the home's files, syncing
an empty folder over it, archiving with removal, emptying files found under it, git's
ways of discarding work, and the delete verbs of cloud, cluster and database tools.

A sweep of ``/``, a system folder or a home is refused like ``rm -rf ~`` (hardline);
anything else here is asked about. Harmless look-alikes stay quiet: ``rsync -a src/
dst/``, ``git checkout main``, ``git stash``, ``kubectl get pods``, ``terraform plan``.
"""

from __future__ import annotations

import re

from hermes_plugin_approvals.shell import Command
from hermes_plugin_approvals.targets import flags, home_glob, long_option, protected_target
from hermes_sdk.approvals import Level, Verdict

__all__ = ["DESTROYERS", "check_destruction", "check_git_discard"]

DESTROYERS = ("rm", "shred", "unlink", "truncate", "wipe", "srm")
"""What ``find -exec`` (or ``xargs``) destroys files with."""

_SWEEP = "recursive-delete-system"
_SWEEP_REASON = "deletes or empties / or a system or home directory"


def _outside(target: str) -> bool:
    return target.startswith(("/", "~", "..")) or target in {"*", ".", ".*"}


def _sweep(targets: list[str]) -> Verdict | None:
    if any(protected_target(t) for t in targets):
        return Verdict(Level.BLOCK, _SWEEP, _SWEEP_REASON)
    return None


def _check_rm_glob(targets: list[str]) -> Verdict | None:
    if any(home_glob(t) for t in targets):
        return Verdict(
            Level.ASK,
            "delete-home-files",
            "deletes every file matched in your home or a system folder",
        )
    return None


def _check_rsync(args: list[str]) -> Verdict | None:
    letters, operands = flags(args)
    deletes = any(
        o.startswith("--del") or long_option(o, "--remove-source-files", 5) for o in letters
    )
    if not deletes or not operands:
        return None
    if protected_target(operands[-1]) or (
        any(o.startswith("--remove-source") for o in letters) and _sweep(operands[:-1])
    ):
        return Verdict(Level.BLOCK, _SWEEP, "syncs over (deletes) / or a system or home folder")
    if _outside(operands[-1]):
        return Verdict(Level.ASK, "sync-delete", "deletes files at the destination it syncs to")
    return None


def _check_emptying(name: str, args: list[str]) -> Verdict | None:
    """``truncate``, ``shred``, ``wipe``: they destroy contents without deleting."""
    _, operands = flags(args)
    if name == "truncate":
        operands = [o for o in operands if not re.match(r"^[-+<>/%]?\d", o)]  # -s 0
    if sweep := _sweep([o for o in operands if not home_glob(o)]):
        return sweep
    if any(home_glob(o) for o in operands) or (name != "truncate" and any(map(_outside, operands))):
        return Verdict(Level.ASK, "destroy-files", f"{name} destroys the contents of files")
    return None


def _check_archive_removal(name: str, args: list[str]) -> Verdict | None:
    removes = (
        (name in ("tar", "bsdtar") and any(long_option(a, "--remove-files", 5) for a in args))
        or (name == "zip" and any(a.startswith("-") and "m" in a[1:] for a in args))
        or (name in ("7z", "7za", "7zz") and "-sdel" in args)
    )
    if not removes:
        return None
    _, operands = flags(args)
    if _sweep(operands) is not None:
        return Verdict(Level.BLOCK, _SWEEP, "archives and deletes / or a system or home folder")
    return Verdict(Level.ASK, "archive-remove", "deletes the files it archives")


_CLOUD_DELETE = re.compile(r"^(delete|terminate|remove|deregister|purge|destroy)(-|$)")
_KUBE_DELETE = frozenset({"delete", "drain", "uninstall", "del", "un"})


def _check_cloud(name: str, args: list[str]) -> Verdict | None:
    operands = [a for a in args if not a.startswith("-")]
    lowered = [a.lower() for a in operands]
    if name in ("terraform", "tofu", "terragrunt", "pulumi", "cdk"):
        if "destroy" in lowered[:2] or (lowered[:1] == ["apply"] and "-destroy" in args):
            return Verdict(Level.ASK, "cloud-destroy", "destroys infrastructure")
        if name == "pulumi" and lowered[:2] == ["stack", "rm"]:
            return Verdict(Level.ASK, "cloud-destroy", "deletes a stack")
        return None
    if name == "aws":
        if lowered[:1] == ["s3"] and lowered[1:2] and lowered[1] in ("rm", "rb"):
            return Verdict(Level.ASK, "cloud-delete", "deletes cloud storage")
        if lowered[:2] == ["s3", "sync"] and "--delete" in args:
            return Verdict(Level.ASK, "cloud-delete", "deletes cloud storage it syncs to")
        if any(_CLOUD_DELETE.match(a) for a in lowered[1:2]):
            return Verdict(Level.ASK, "cloud-delete", "deletes cloud resources")
        return None
    if name in ("gcloud", "az", "doctl", "linode-cli", "hcloud", "oci", "flyctl", "fly"):
        if any(_CLOUD_DELETE.match(a) for a in lowered):
            return Verdict(Level.ASK, "cloud-delete", "deletes cloud resources")
        return None
    if name == "gsutil" and any(a in ("rm", "rb") for a in lowered[:3]):
        return Verdict(Level.ASK, "cloud-delete", "deletes cloud storage")
    if name == "heroku" and any(a.endswith(":destroy") for a in lowered):
        return Verdict(Level.ASK, "cloud-delete", "destroys an app")
    if name in ("kubectl", "oc", "helm", "k3s") and lowered[:1] and lowered[0] in _KUBE_DELETE:
        return Verdict(Level.ASK, "cluster-delete", "deletes cluster resources")
    return None


_REDIS_WIPE = re.compile(r"\b(flushall|flushdb)\b", re.IGNORECASE)
_MONGO_WIPE = re.compile(r"dropDatabase|\.drop\(\)|deleteMany\(\s*\{\s*\}\s*\)", re.IGNORECASE)


def _check_database(command: Command) -> Verdict | None:
    name, args = command.name, command.args
    fed = [w for p in command.fed_by for w in p.args]
    stdin = [t for op, t in command.redirects if op.startswith("<<")]
    text = " ".join([*args, *fed, *stdin])
    if name in ("redis-cli", "valkey-cli", "keydb-cli") and _REDIS_WIPE.search(text):
        return Verdict(Level.ASK, "database-wipe", "deletes every key of a database")
    if name in ("mongo", "mongosh") and _MONGO_WIPE.search(text):
        return Verdict(Level.ASK, "database-wipe", "drops a database or collection")
    if name in ("dropdb", "dropuser") or (name == "mysqladmin" and "drop" in args):
        return Verdict(Level.ASK, "database-wipe", "drops a database")
    if name == "etcdctl" and "del" in args and "--prefix" in args:
        return Verdict(Level.ASK, "database-wipe", "deletes every key under a prefix")
    if name in ("docker", "podman"):
        operands = [a for a in args if not a.startswith("-")]
        if operands[:1] == ["volume"] and operands[1:2] and operands[1] in ("rm", "prune"):
            return Verdict(Level.ASK, "docker-prune", "deletes Docker volumes and their data")
        if operands[:2] == ["compose", "down"] and any(a in ("-v", "--volumes") for a in args):
            return Verdict(Level.ASK, "docker-prune", "deletes Docker volumes and their data")
    return None


def check_git_discard(sub: str, args: list[str]) -> Verdict | None:
    """git's ways of losing work beyond ``reset --hard`` and ``clean -f``."""
    letters, operands = flags(args)
    if sub == "checkout" and ("--" in args or "." in operands or letters & {"f", "--force"}):
        return Verdict(Level.ASK, "git-discard", "overwrites uncommitted changes in files")
    if sub == "restore":
        staged_only = any(long_option(o, "--staged", 4) for o in letters) and not any(
            long_option(o, "--worktree", 4) for o in letters
        )
        if not staged_only and not (letters & {"S"} and "W" not in letters):
            return Verdict(Level.ASK, "git-discard", "overwrites uncommitted changes in files")
    if sub == "stash" and operands[:1] and operands[0] in ("clear", "drop"):
        return Verdict(Level.ASK, "git-discard", "deletes stashed work")
    if sub == "push" and any(o.startswith(":") and len(o) > 1 for o in operands[1:]):
        return Verdict(Level.ASK, "git-force-push", "deletes a branch or tag on the remote")
    if sub in ("filter-branch", "filter-repo") or (sub == "reflog" and operands[:1] == ["expire"]):
        return Verdict(Level.ASK, "git-rewrite", "rewrites or expires the repository's history")
    return None


_LISTERS = frozenset({"find", "ls", "fd", "fdfind", "locate", "tree", "du"})


def _listed_from_protected(command: Command) -> bool:
    """Its targets come from a listing of the home, ``/`` or a system folder: ``find ~
    -type f | xargs rm``, ``ls ~ | xargs rm -f``."""
    for producer in command.fed_by:
        if producer.name in _LISTERS:
            starts = [a for a in producer.args if not a.startswith(("-", "(", "!"))]
            if any(protected_target(s) or home_glob(s) for s in starts[:1]):
                return True
    return False


def check_destruction(command: Command, words: list[str]) -> Verdict | None:
    """``words`` are the command's own (with the targets ``xargs``, loops or a ``cd`` gave
    it resolved)."""
    name, args = words[0], words[1:]
    if name in DESTROYERS and command.fed_by and _listed_from_protected(command):
        return Verdict(
            Level.ASK,
            "delete-home-files",
            "deletes or empties files listed from your home or a system folder",
        )
    if name == "rm":
        _, targets = flags(args)
        return _check_rm_glob(targets)
    if name == "rsync":
        return _check_rsync(args)
    if name in ("truncate", "shred", "wipe", "srm"):
        return _check_emptying(name, args)
    if name in ("tar", "bsdtar", "zip", "7z", "7za", "7zz"):
        return _check_archive_removal(name, args)
    return _check_cloud(name, args) or _check_database(command)
