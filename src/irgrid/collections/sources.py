"""Finding a collection's raw files: a local mirror, or a verified download.

:func:`resolve_files` looks, in order, in

1. the ``mirror`` argument (the workflow's ``mirror`` config key),
2. the directory named by the ``IRGRID_MIRROR`` environment variable,
3. ``../shared/collections`` next to the checkout (found from the working directory and from
   the checkout the package is installed from),

each holding one sub-directory per collection (the entry's ``mirror`` key; a file that another
collection's folder holds is looked for there, ``file_mirrors``). The first place holding *every*
file of the collection wins, so files of two different copies are never mixed. Failing that, the
files are taken from ``resources/collections/{id}/`` (downloaded by an earlier run) or
downloaded there from the entry's ``url``: to a temporary name, checked against the registry's
sha256, then renamed, so an interrupted or corrupted download never looks like a finished one.
A url may point to a tar or zip archive (the Glasgow collections come as ``cran.tar.gz`` etc.);
the member is the url's ``#fragment`` or, without one, the archive member with the file's base
name. An archive url without ``#fragment`` whose name is the file's own (``cacm.tar.gz`` for the
file ``cacm.tar.gz``) is the file itself, kept as it is.

Files the entry lists in ``package_files`` are small files this project ships (src/irgrid/data/):
they are read from there whatever the mirror, checked against the registry's sha256 like any other.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import ConfigError
from ..io import publish_mode
from .spec import PACKAGE_DATA_DIR, PACKAGE_REPO_ROOT, CollectionSpec

log = logging.getLogger(__name__)

MIRROR_ENV = "IRGRID_MIRROR"
DOWNLOAD_TIMEOUT_SECONDS = 60
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".zip")
_CHUNK = 1 << 20


class CollectionNotAvailable(FileNotFoundError):
    """No mirror holds the collection's files and they could not be downloaded."""


class ChecksumError(ValueError):
    """A file's sha256 is not the one the registry records."""


def sha256_of(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


# Files already checked in this process, keyed by (path, size, mtime): a Snakemake job may
# resolve the same collection several times and hashing again would only cost time.
_verified: set[tuple[str, int, int, str]] = set()


def verify_file(path: Path, expected: str | None, what: str) -> None:
    """Raise :class:`ChecksumError` if ``path``'s sha256 is not ``expected`` (None: no check)."""
    if expected is None or path.is_dir():
        return
    stat = path.stat()
    # with the digest expected: the same file checked against another registry's checksum is checked again
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, expected.lower())
    if key in _verified:
        return
    actual = sha256_of(path)
    if actual != expected.lower():
        raise ChecksumError(f"{what}: sha256 is {actual}, the registry expects {expected}")
    _verified.add(key)


def _checkout_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` that looks like an irgrid checkout, else ``start``."""
    for directory in (start, *start.parents):
        if (directory / "config" / "collections.yaml").is_file() or (directory / ".git").exists():
            return directory
    return start


def mirror_candidates(mirror: str | os.PathLike | None = None) -> list[tuple[str, Path]]:
    """The mirror roots to try, in order, each with a label for messages."""
    candidates: list[tuple[str, Path]] = []
    if mirror:
        candidates.append(("the mirror argument", Path(mirror)))
    if os.environ.get(MIRROR_ENV):
        candidates.append((f"${MIRROR_ENV}", Path(os.environ[MIRROR_ENV])))
    for root in (_checkout_root(Path.cwd()), PACKAGE_REPO_ROOT):
        shared = root.resolve().parent / "shared" / "collections"
        if all(shared != path for _, path in candidates):
            candidates.append(("../shared/collections", shared))
    return candidates


def resolve_files(spec: CollectionSpec, mirror: str | os.PathLike | None = None,
                  resources_dir: str | os.PathLike = "resources", download: bool = True,
                  verify: bool = True) -> dict[str, Path]:
    """Local paths of the collection's files: role (``docs``, ``queries``, ``qrels``...) -> path.

    ``download=False`` only looks locally (tests use it to skip when no mirror is present).
    ``verify=False`` skips the sha256 check of mirror files (downloads are always checked).
    ir_datasets collections have no files of ours: ir_datasets manages its own downloads.
    """
    if spec.format == "ir_datasets" or not spec.files:
        return {}
    packaged = {name: package_file(spec, name, verify) for name in spec.package_files}
    names = [name for name in dict.fromkeys(spec.files.values()) if name not in packaged]  # unique, in registry order
    # Absolute paths are read where they are: no mirror or download holds them, so a missing one is
    # only that, a file that is not there.
    absolute = {name: Path(name) for name in names if Path(name).is_absolute()}
    _check_absolute_files(spec)
    if verify:
        for name, path in absolute.items():
            verify_file(path, spec.sha256.get(name), f"{path} (collection {spec.id!r})")
    names = [name for name in names if name not in absolute]
    if not names:
        log.info("collection %s: reading %s (absolute paths in the registry)", spec.id, ", ".join(absolute))
        found = {**absolute, **packaged}
        return {role: found[name] for role, name in spec.files.items()}
    tried = []
    for label, root in mirror_candidates(mirror):
        paths = {name: root / spec.folder_of(name) / name for name in names}
        missing = [name for name, path in paths.items() if not path.exists()]
        for name in missing:
            if paths[name].is_symlink():
                # a link whose target moved: the copy that is read next may not be the one meant
                log.warning("collection %s: %s is a dangling symbolic link (to %s, which does not exist); "
                            "the collection's files are taken from the next source instead", spec.id, paths[name],
                            os.readlink(paths[name]))
        directory = root / spec.mirror
        if not missing:
            if verify:
                for name, path in paths.items():
                    verify_file(path, spec.sha256.get(name), f"{path} ({label})")
            also = f", and {', '.join(absolute)} (absolute paths in the registry)" if absolute else ""
            log.info("collection %s: using %s (%s)%s", spec.id, directory, label, also)
            found = {**paths, **absolute, **packaged}
            return {role: found[name] for role, name in spec.files.items()}
        shown = ", ".join(str(paths[name].relative_to(root)) for name in missing)
        tried.append(f"{root} ({label}; missing {shown})")
        if label != "../shared/collections":
            log.warning("collection %s: %s lacks %s; trying the next source", spec.id, root, shown)

    target_dir = download_dir(spec, resources_dir)
    missing = [name for name in names if not (target_dir / name).exists()]
    if missing:
        tried.append(f"{target_dir} (earlier downloads; missing {', '.join(missing)})")
        if not download:
            raise CollectionNotAvailable(_not_available(spec, tried, "downloading is switched off"))
        _download_missing(spec, missing, target_dir, tried)
    else:
        log.info("collection %s: using %s (earlier downloads)", spec.id, target_dir)
    found = {**{name: target_dir / name for name in names}, **absolute, **packaged}
    return {role: found[name] for role, name in spec.files.items()}


def _check_absolute_files(spec: CollectionSpec) -> None:
    """A registry file given as an absolute path that does not exist: CollectionNotAvailable saying so."""
    roles = {name: role for role, name in spec.files.items()}
    missing = [name for name in roles if Path(name).is_absolute() and not Path(name).exists()]
    if missing:
        raise CollectionNotAvailable("; ".join(f"collection {spec.id!r}: raw file {name} (files/{roles[name]}) "
                                               "does not exist" for name in missing))


def check_available(spec: CollectionSpec, mirror: str | os.PathLike | None = None,
                    resources_dir: str | os.PathLike = "resources") -> None:
    """Raise :class:`CollectionNotAvailable` if a job could not get the collection's raw files: an
    absolute path that does not exist, or a file in no mirror, not downloaded yet and without a url.

    Nothing is downloaded or hashed (files with a url are fetched, and checked, by the job): the
    workflow calls this while planning, so that ``snakemake -n`` stops on a wrong path instead of
    the job that reads it.
    """
    _check_absolute_files(spec)
    try:
        resolve_files(spec, mirror=mirror, resources_dir=resources_dir, download=False, verify=False)
    except CollectionNotAvailable:
        target_dir = download_dir(spec, resources_dir)
        names = [name for name in dict.fromkeys(spec.files.values())
                 if name not in spec.package_files and not Path(name).is_absolute()]
        without_url = [name for name in names if name not in spec.url and not (target_dir / name).exists()]
        if without_url:
            tried = [f"{root} ({label})" for label, root in mirror_candidates(mirror)] + [f"{target_dir} (downloads)"]
            raise CollectionNotAvailable(_not_available(spec, tried, f"no url in the registry for "
                                                                      f"{', '.join(without_url)}")) from None


def package_file(spec: CollectionSpec, name: str, verify: bool = True) -> Path:
    """The path of a file the entry takes from irgrid's package data (``package_files``), checked."""
    path = PACKAGE_DATA_DIR / name
    if not path.is_file():
        raise ConfigError(f"collection {spec.id!r}: {name!r} is listed in 'package_files' but irgrid's package "
                          f"data has no such file ({path})")
    if verify:
        verify_file(path, spec.sha256.get(name), f"{path} (irgrid's package data)")
    return path


def download_dir(spec: CollectionSpec, resources_dir: str | os.PathLike = "resources") -> Path:
    """Where the collection's files are downloaded to (and looked for after the mirrors)."""
    return Path(resources_dir) / "collections" / spec.id


def _not_available(spec: CollectionSpec, tried: Iterable[str], reason: str) -> str:
    places = "\n  ".join(tried)
    return (f"collection {spec.id!r}: raw files not found and not downloaded ({reason}).\n"
            f"Looked in:\n  {places}\n"
            f"Point the 'mirror' config key or ${MIRROR_ENV} at a directory holding "
            f"{', '.join(_mirror_paths(spec))}, or allow network access to the registry's urls.")


def _mirror_paths(spec: CollectionSpec) -> list[str]:
    """The files a mirror must hold for ``spec``, as paths below the mirror root."""
    names = sorted(set(spec.files.values()) - set(spec.package_files))
    return [f"{spec.folder_of(name)}/{name}" for name in names if not Path(name).is_absolute()]


def _is_archive(url: str) -> bool:
    path = urllib.parse.urlsplit(url).path.lower()
    return path.endswith(_ARCHIVE_SUFFIXES)


def _download_missing(spec: CollectionSpec, missing: list[str], target_dir: Path, tried: list[str]) -> None:
    """Download every missing file, one fetch per distinct url (several files share a tarball)."""
    without_url = [name for name in missing if name not in spec.url]
    if without_url:
        raise CollectionNotAvailable(_not_available(spec, tried, f"no url in the registry for {', '.join(without_url)}"))
    by_url: dict[str, list[tuple[str, str | None]]] = {}
    for name in missing:
        url, _, fragment = spec.url[name].partition("#")
        by_url.setdefault(url, []).append((name, fragment or None))
    target_dir.mkdir(parents=True, exist_ok=True)
    for url, wanted in by_url.items():
        fetched = _fetch(spec, url, target_dir, tried)
        try:
            if _is_archive(url) and not _is_the_file(url, wanted):
                for name, member in wanted:
                    _extract_member(spec, fetched, url, member or name, name, target_dir / name)
            else:
                if len(wanted) > 1:
                    raise ConfigError(f"collection {spec.id!r}: files {[n for n, _ in wanted]} share the url {url}, "
                                      "which is not an archive")
                _install(spec, fetched, wanted[0][0], target_dir / wanted[0][0], url)
                fetched = None  # renamed into place, nothing to clean up
        finally:
            if fetched is not None and fetched.exists():
                fetched.unlink()


def _is_the_file(url: str, wanted: list[tuple[str, str | None]]) -> bool:
    """Whether an archive url is the registry file itself (a collection kept as a tarball, such as
    Anserini's cacm.tar.gz), not a bundle to take a member from: one file, no #member, same name."""
    if len(wanted) != 1:
        return False
    name, member = wanted[0]
    return member is None and Path(urllib.parse.urlsplit(url).path).name == Path(name).name


def _temp_path(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{Path(name).name}.", suffix=".part", dir=directory)
    os.close(handle)
    publish_mode(temp_name)  # a downloaded collection file is readable by the group as a plain file would be
    return Path(temp_name)


def _fetch(spec: CollectionSpec, url: str, target_dir: Path, tried: list[str]) -> Path:
    """Stream ``url`` to a temporary file in ``target_dir``; CollectionNotAvailable on failure."""
    temp = _temp_path(target_dir, Path(urllib.parse.urlsplit(url).path).name or "download")
    log.info("collection %s: downloading %s", spec.id, url)
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response, open(temp, "wb") as out:
            shutil.copyfileobj(response, out, _CHUNK)
    except (urllib.error.URLError, OSError, ValueError) as error:
        temp.unlink(missing_ok=True)
        raise CollectionNotAvailable(_not_available(spec, tried, f"downloading {url} failed: {error}")) from None
    return temp


def _install(spec: CollectionSpec, temp: Path, name: str, target: Path, source: str) -> None:
    """Check ``temp`` against the registry's sha256 for ``name`` and rename it to ``target``."""
    expected = spec.sha256.get(name)
    try:
        if expected is None:  # the entry says `checksum: none` (CollectionSpec refuses a url without either)
            log.warning("collection %s: no sha256 in the registry for %s (checksum: none); installed unchecked",
                        spec.id, name)
        else:
            verify_file(temp, expected, f"collection {spec.id!r}: {name} from {source} (deleted)")
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(temp, target)


def _pick_member(names: list[str], wanted: str, url: str) -> str:
    """The archive member for ``wanted``: exact path, else unique base name (then case-insensitively)."""
    if wanted in names:
        return wanted
    base = Path(wanted).name
    for same in (lambda n: Path(n).name == base, lambda n: Path(n).name.lower() == base.lower()):
        matches = [n for n in names if same(n)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise ConfigError(f"{url}: several members are named {base!r} ({matches}); "
                              "name one with '#member/path' at the end of the url")
    raise ConfigError(f"{url}: no member {wanted!r}; members: {names[:20]}")


def _extract_member(spec: CollectionSpec, archive: Path, url: str, member: str, name: str, target: Path) -> None:
    """Copy one archive member to a temporary file, verify it as registry file ``name``, rename it to ``target``."""
    temp = _temp_path(target.parent, target.name)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as bundle:
                names = [info.filename for info in bundle.infolist() if not info.is_dir()]
                with bundle.open(_pick_member(names, member, url)) as source, open(temp, "wb") as out:
                    shutil.copyfileobj(source, out, _CHUNK)
        else:
            try:
                bundle = tarfile.open(archive, "r:*")
            except tarfile.TarError as error:
                raise ChecksumError(f"{url}: not a readable tar archive ({error})") from None
            with bundle:
                members = {m.name: m for m in bundle.getmembers() if m.isfile()}
                # extractfile() reads the bytes only: no path from the archive touches the disk.
                source = bundle.extractfile(members[_pick_member(list(members), member, url)])
                with source, open(temp, "wb") as out:
                    shutil.copyfileobj(source, out, _CHUNK)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _install(spec, temp, name, target, url)
