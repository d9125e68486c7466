"""HTTP to a SPARQL engine for ``publish``: credentials kept out of argv and URLs, the login negotiated with a small
probe before any large body, one overall deadline, bounded retries, and the engine's text escaped before it is shown.

urllib's own auth handlers send every request once without credentials and again after the 401: each batch of
~15 MB travelled twice, and a Basic password followed the first copy in clear. Here a tiny probe learns the scheme
the engine asks for (Digest or Basic); every later request carries the answer from its first byte.
"""

import base64
import ipaddress
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PASSWORD_ENV = "BIBGRAPH_PUBLISH_PASSWORD"
RETRIES = 3  # attempts after the first, for answers worth trying again (deadlock, 502-504, a dropped connection)
PAUSE = 1.0  # seconds before the first retry, doubled each time
SHOWN = 300  # characters of an engine's error text shown
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_WHOLE_NUMBER = re.compile(r"[0-9]{1,19}")


class EngineError(Exception):
    """The engine cannot be reached, refused a request, or gave an answer that cannot be read; one line."""


class DeadlineError(EngineError):
    """The overall deadline passed."""


def escaped(text: str, limit: int = SHOWN) -> str:
    """``text`` safe for a terminal or a log line: control and bidirectional characters written as ``\\xNN`` /
    ``\\uNNNN`` (an engine's error page cannot move the cursor, recolour or hide text), cut to ``limit``."""
    cut = text[:limit] + ("..." if len(text) > limit else "")
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", cut)


def whole_number(value: object, what: str) -> int:
    """``value`` read as a count: digits only (no sign, exponent or fraction), at most 19 of them."""
    if not isinstance(value, str) or not _WHOLE_NUMBER.fullmatch(value):
        raise EngineError(f"the engine's {what} is not a whole number: {escaped(repr(value), 60)}")
    return int(value)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a URL's host name, not resolved) is this machine: ``localhost`` or a loopback address."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_password(environ: dict[str, str], password_file: Path | None) -> str | None:
    """The password from ``password_file`` (its first line) or the environment; never from argv."""
    if password_file is not None:
        try:
            lines = password_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise EngineError(f"cannot read the password file {password_file}: {error}") from error
        return lines[0] if lines else ""
    return environ.get(PASSWORD_ENV) or None


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str


def checked_url(url: str, what: str, credentials: Credentials | None, insecure_http: bool) -> str:
    """``url`` if it may carry ``credentials``: refused with a password in it (``ps`` shows argv to every user of the
    machine), or as plain HTTP to another host with credentials (unless ``insecure_http``)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} needs an http(s) URL, not {escaped(_without_userinfo(url), 200)!r}")
    if parts.password is not None:
        raise ValueError(
            f"{what}: a password in the URL is visible to every user of this machine (ps); remove it and give it"
            f" in {PASSWORD_ENV} or --password-file"
        )
    cleartext = parts.scheme == "http" and not is_loopback(parts.hostname)
    if credentials is not None and cleartext and not insecure_http:
        raise ValueError(
            f"{what}: credentials would cross the network in clear to {parts.hostname} over plain HTTP;"
            " use https, or --insecure-http if this network is trusted"
        )
    return url


def _without_userinfo(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class Deadline:
    """One deadline for a whole run: every request's timeout is what is left of it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def left(self) -> float:
        left = self.ends - time.monotonic()
        if left <= 0:
            raise DeadlineError(f"the deadline of {self.seconds:g} s (--timeout) passed")
        return left


class Session:
    """Requests to one engine with the login learnt once by a probe (:meth:`login`), retried within the deadline."""

    def __init__(self, credentials: Credentials | None, deadline: Deadline) -> None:
        self.credentials = credentials
        self.deadline = deadline
        self.opener = urllib.request.build_opener()  # no auth handlers: credentials only where the probe asked
        self._digest: urllib.request.HTTPDigestAuthHandler | None = None
        self._challenges: dict[str, dict[str, str]] = {}  # per URL: the Digest challenge the probe received
        self._basic: set[str] = set()

    def login(self, url: str) -> None:
        """Send a request with no body to ``url``; learn the scheme from its 401 (none asked: no credentials sent)."""
        request = urllib.request.Request(url, method="GET")
        try:
            with self.opener.open(request, timeout=min(30.0, self.deadline.left())) as response:
                response.read(1 << 16)
            return
        except urllib.error.HTTPError as error:
            error.read(1 << 16)
            if error.code != 401:
                return  # the probe's own answer (404 for a graph not there yet) says nothing about the login
            challenge = error.headers.get("WWW-Authenticate", "")
        except OSError as error:
            raise EngineError(f"cannot reach {_origin(url)}: {escaped(str(error))}") from error
        if self.credentials is None:
            raise EngineError(f"{_origin(url)} asks for a login: give --user, and the password in {PASSWORD_ENV}")
        scheme, _, rest = challenge.partition(" ")
        if scheme.lower() == "digest":
            if self._digest is None:  # one handler: it counts the nonces it used
                passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
                parts = urllib.parse.urlsplit(url)
                passwords.add_password(None, f"{parts.scheme}://{parts.netloc}/", *self._pair())
                self._digest = urllib.request.HTTPDigestAuthHandler(passwords)
            self._challenges[url] = urllib.request.parse_keqv_list(urllib.request.parse_http_list(rest))
        elif scheme.lower() == "basic":
            self._basic.add(url)
        else:
            raise EngineError(f"{_origin(url)} asks for an unknown login scheme {escaped(scheme, 40)!r}")

    def _pair(self) -> tuple[str, str]:
        assert self.credentials is not None  # asked only once a login is known to be needed
        return self.credentials.user, self.credentials.password

    def _authorised(self, request: urllib.request.Request, login_url: str) -> None:
        if login_url in self._challenges and self._digest is not None:
            header = self._digest.get_authorization(request, self._challenges[login_url])
            if header:
                request.add_unredirected_header("Authorization", f"Digest {header}")
        elif login_url in self._basic:
            pair = ":".join(self._pair()).encode()
            request.add_unredirected_header("Authorization", "Basic " + base64.b64encode(pair).decode("ascii"))

    def request(
        self, method: str, url: str, login_url: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> bytes:
        """The answer's body; retried with backoff on a rolled-back deadlock, 502-504 or a dropped connection.

        A 401 after the probe (a Digest nonce gone stale) logs in again once, with a bodiless probe."""
        again = True
        for attempt in range(RETRIES + 1):
            request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
            self._authorised(request, login_url)
            try:
                with self.opener.open(request, timeout=self.deadline.left()) as response:
                    data: bytes = response.read()
                    return data
            except urllib.error.HTTPError as error:
                text = error.read(1 << 16).decode("utf-8", "replace").strip()
                if error.code == 401 and again:
                    again = False
                    self.login(login_url)
                    continue
                transient = error.code in (502, 503, 504) or "40001" in text or "deadlock" in text.lower()
                if attempt < RETRIES and transient:
                    self._wait(attempt)
                    continue
                hint = f" (check --user and {PASSWORD_ENV})" if error.code in (401, 403) else ""
                raise EngineError(f"{method} {_origin(url)} answered {error.code}{hint}: {escaped(text)}") from error
            except TimeoutError as error:
                self.deadline.left()  # the deadline's own message if that is what ran out
                raise EngineError(f"{method} {_origin(url)} timed out") from error
            except OSError as error:  # refused or dropped connection
                if attempt < RETRIES:
                    self._wait(attempt)
                    continue
                raise EngineError(f"{method} {_origin(url)} failed: {escaped(str(error))}") from error
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _wait(self, attempt: int) -> None:
        pause = PAUSE * 2**attempt
        if pause >= self.deadline.left():
            raise DeadlineError(f"the deadline of {self.deadline.seconds:g} s (--timeout) passed while retrying")
        time.sleep(pause)


def _origin(url: str) -> str:
    """``url`` without its query (a graph IRI) and userinfo, escaped: how a request is named in messages."""
    parts = urllib.parse.urlsplit(_without_userinfo(url))
    return escaped(urllib.parse.urlunsplit(parts._replace(query="")), 200)
