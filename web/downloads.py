"""``/download``: the dump in every RDF format and gzip, written once from the store, then served
as files (so Flask sends Content-Length, ETag, Last-Modified, 304s and HEAD, streaming from disk)."""

import gzip
import shutil
import tempfile
import threading
from pathlib import Path
from typing import BinaryIO

from flask import Blueprint, Flask, abort, current_app, render_template, send_file

from bibgraph.graph import datadir
from bibgraph.graph.atomic import write_atomically
from bibgraph.graph.formats import RDF_SYNTAXES
from bibgraph.graph.void import DUMP_STEM

from .graphstore import get_store

blueprint = Blueprint("downloads", __name__, url_prefix="/download")
_lock = threading.RLock()  # reentrant: a .gz file ensures its source first
DUMPS = {f"{DUMP_STEM}.{s.suffix}": (s.name, s.media_type, s.label) for s in RDF_SYNTAXES}
DATASET_VERSION = "BIBGRAPH_DATASET_VERSION"  # app config: the dataset version served, if any
GZIPPED = {f"{DUMP_STEM}.{s.suffix}.gz": f"{DUMP_STEM}.{s.suffix}" for s in RDF_SYNTAXES if s.name in ("turtle", "nt")}


def _directory(app: Flask) -> Path:
    directory = app.config.get("DOWNLOAD_DIR")
    if not directory:
        directory = tempfile.mkdtemp(prefix="bibgraph-downloads-")
        app.config["DOWNLOAD_DIR"] = directory
    version = app.config.get(DATASET_VERSION)
    path = Path(directory) / Path(version).name if version else Path(directory)  # a dataset's: one per version
    path.mkdir(parents=True, exist_ok=True)
    return path


def ensure(name: str) -> Path:
    """The file ``name``, written from the store on first request (atomically; never half-written)."""
    version = current_app.config.get(DATASET_VERSION)
    if version and (Path(version) / datadir.DUMPS / name).is_file():  # written by the dataset's build
        return Path(version) / datadir.DUMPS / name
    path = _directory(current_app) / name
    with _lock:
        if path.exists():
            return path
        if name in DUMPS:
            deadline = float(current_app.config["NETWORK_TIMEOUT"])
            get_store().with_deadline(deadline).dump_file(str(path), DUMPS[name][0])
        else:
            source = ensure(GZIPPED[name])

            def pack(out: BinaryIO) -> None:
                with source.open("rb") as raw, gzip.GzipFile(name, "wb", fileobj=out, mtime=0) as packed:
                    shutil.copyfileobj(raw, packed, 1024 * 1024)

            write_atomically(path, pack)
    return path


@blueprint.route("/")
def index() -> str:
    dumps = [(label, name) for name, (_, _, label) in DUMPS.items()]
    dumps += [(f"{DUMPS[source][2]}, gzip", name) for name, source in GZIPPED.items()]
    formats = [
        ("graphml", "GraphML"),
        ("gexf", "GEXF (Gephi)"),
        ("json", "node-link JSON"),
        ("vosviewer", "VOSviewer JSON"),
    ]
    return render_template("download.html", title="Downloads", dumps=dumps, network_formats=formats)


@blueprint.route("/<name>")
def file(name: str):
    if name not in DUMPS and name not in GZIPPED:
        abort(404)
    path = ensure(name)
    media_type = DUMPS[name][1] if name in DUMPS else "application/gzip"
    return send_file(
        path,
        mimetype=media_type,
        as_attachment=True,
        download_name=name,
        conditional=True,
        etag=True,
        last_modified=path.stat().st_mtime,
        max_age=0,
    )
