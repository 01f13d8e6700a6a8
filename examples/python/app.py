"""A server-rendered app in Python that reads Gatehouse's session, and an API taking its tokens.

nginx (nginx.conf) puts this app and Gatehouse on one origin: the browser signs in on
Gatehouse's own page, and this app forwards the browser's cookies to Gatehouse's
GET /api/auth/session to learn who is signed in. Sign-up, "Forgot your password?" and the
account settings are Gatehouse's pages, linked; this app's own /account has one form of its
own, the password change, which it posts on to Gatehouse's account API. Every request to
Gatehouse on a person's behalf carries their device and address, and a Gatehouse that does not
answer is a page that says so. GET /api/me answers callers that send a token from Gatehouse's
/api/auth/token instead of the cookie, checked with PyJWT against Gatehouse's public keys. The
standard library does the rest.
"""

import html
import json
import os
import re
import sys
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.error import HTTPError, URLError
from urllib.parse import parse_qs, quote, urlsplit

try:
    import jwt
    from jwt.algorithms import has_crypto
except ImportError:
    has_crypto = False
if not has_crypto:
    raise SystemExit(
        "app.py checks Gatehouse's tokens with PyJWT and cryptography (ES256): "
        "apt install python3-jwt python3-cryptography, or pip install 'pyjwt[crypto]'"
    )

# Where Gatehouse listens, as this server reaches it (not through nginx).
GATEHOUSE_URL = os.environ.get("GATEHOUSE_URL", "http://127.0.0.1:3000")
PORT = int(os.environ.get("PORT", "8000"))

# Gatehouse's public keys, fetched from Gatehouse directly and kept five minutes; fetched again
# for a token signed by a key not among them (after a rotation).
TOKEN_KEYS = jwt.PyJWKClient(f"{GATEHOUSE_URL}/api/auth/jwks.json")
# Who signs the tokens, and whom they are for: Gatehouse's AUTH_URL, and its TOKEN_AUDIENCE
# (by default the same).
TOKEN_ISSUER = os.environ.get("TOKEN_ISSUER", "http://localhost:8080")
TOKEN_AUDIENCE = os.environ.get("TOKEN_AUDIENCE", TOKEN_ISSUER)

# Gatehouse's own pages on this origin (ACCOUNT_PAGES_PATH=/api/auth/account, forwarded by nginx).
ACCOUNT_PAGE = "/api/auth/account"
FORGOT_PASSWORD_PAGE = "/api/auth/account/password/forgot"
SIGN_UP_PAGE = "/api/auth/account/signup"


def on_behalf_of(browser):
    """What a request to Gatehouse for the browser's request (its headers, `browser`) carries:
    its cookies, and who the person is as far as Gatehouse's record goes, their device (the
    User-Agent) and their address (X-Forwarded-For, which nginx set: Gatehouse believes it from
    this app's address, in TRUST_PROXY). Without them the account's history, its sessions and the
    new-device notice would show this app ("Python-urllib", 127.0.0.1)."""
    return {
        "Cookie": browser.get("Cookie") or "",
        "User-Agent": browser.get("User-Agent") or "",
        "X-Forwarded-For": browser.get("X-Forwarded-For") or "",
        "X-Forwarded-Proto": browser.get("X-Forwarded-Proto") or "http",
    }


def ask_gatehouse(path, browser):
    """GET `path` from Gatehouse for the browser's request: its JSON, and the cookies it sets.
    Raises URLError when Gatehouse does not answer (the handler's 503 page)."""
    request = urllib.request.Request(f"{GATEHOUSE_URL}{path}", headers=on_behalf_of(browser))
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response), response.headers.get_all("Set-Cookie") or []


def session_from_gatehouse(browser):
    """Gatehouse's answer for the browser's cookies, and the cookies it sets.

    The session is None, or {"user": {"id", "email", "name"}, "expires"}: None as soon as it
    was signed out or revoked, or the user disabled or removed. When the session's refresh is
    due (once a day), Gatehouse sets a new cookie: the caller passes it on to the browser."""
    return ask_gatehouse("/api/auth/session", browser)


def csrf_token(browser):
    """A CSRF token for a form of this app that posts to Gatehouse, and the cookies Gatehouse
    sets with it (its CSRF cookie, which the token is checked against: passed on)."""
    answer, cookies = ask_gatehouse("/api/auth/csrf", browser)
    return answer["csrfToken"], cookies


def identity_providers(browser):
    """The identity providers Gatehouse is configured with (AUTH_OIDC_*, AUTH_GITHUB_*…), from
    GET /api/auth/providers: [{"id", "name"}], a "Continue with …" button each."""
    listed, _ = ask_gatehouse("/api/auth/providers", browser)
    return [p for p in listed.values() if p.get("type") in ("oidc", "oauth")]


def post_account(route, fields, browser, token):
    """POST /api/account/<route> (Gatehouse's account API, JSON) with the browser's cookies and
    the form's CSRF token. Returns (ok, message, cookies): on a refusal, the message Gatehouse
    wrote for the person; the cookies it sets (a password change gives the session a new one)
    are passed on."""
    request = urllib.request.Request(
        f"{GATEHOUSE_URL}/api/account{route}",
        data=json.dumps(fields).encode(),
        method="POST",
        headers={
            **on_behalf_of(browser),
            "Content-Type": "application/json",
            "X-CSRF-Token": token,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return True, "", response.headers.get_all("Set-Cookie") or []
    except HTTPError as refused:
        try:
            message = json.load(refused)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = f"Gatehouse answered {refused.code}."
        return False, message, refused.headers.get_all("Set-Cookie") or []


def token_claims(authorization):
    """The claims of a token from Gatehouse's /api/auth/token, sent as `Authorization: Bearer
    …`: (claims, None), or (None, why it is refused). Its signature is checked against
    Gatehouse's key set, and its issuer, audience and expiry, with no call to Gatehouse per
    request. A token stays valid until it expires (TOKEN_TTL, 5 minutes by default), even after
    its session has ended. Raises PyJWKClientError when the key set cannot be fetched."""
    match = re.fullmatch(r"Bearer +(\S+) *", authorization or "", re.IGNORECASE)
    if not match:
        return None, "Send a token from /api/auth/token as Authorization: Bearer."
    token = match[1]
    try:
        key = TOKEN_KEYS.get_signing_key_from_jwt(token).key
        claims = jwt.decode(
            token,
            key,
            algorithms=["ES256"],
            audience=TOKEN_AUDIENCE,
            issuer=TOKEN_ISSUER,
            options={"require": ["exp", "sub"]},
        )
    except jwt.ExpiredSignatureError:
        return None, "The token has expired: get a new one from /api/auth/token."
    except (jwt.InvalidIssuerError, jwt.InvalidAudienceError):
        return None, "The token is not for this API: its issuer or audience differ."
    except jwt.PyJWKClientError as error:
        # The key set out of reach is this server's trouble, not the token's (PyJWT 2.8 and
        # later raise PyJWKClientConnectionError for it).
        if isinstance(error.__context__, URLError):
            raise
        return None, "The token is not signed by Gatehouse."
    except (jwt.InvalidSignatureError, jwt.InvalidAlgorithmError):
        return None, "The token is not signed by Gatehouse."
    except jwt.InvalidTokenError:
        return None, "That is not a token."
    return claims, None


def describe(session):
    if not session:
        return "Not signed in"
    user = session["user"]
    return f"Signed in as {user.get('name') or user['email']} (id {user['id']})"


# What /account says after a success (Post/Redirect/Get), by its `done` value.
DONE = {"password": "Password changed. Your other sessions are signed out."}


def page(title, body):
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{html.escape(title)}</title>
</head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem">
{body}
</body>
</html>"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.unless_gatehouse_is_down(self.get)

    def do_POST(self):
        self.unless_gatehouse_is_down(self.post)

    def unless_gatehouse_is_down(self, handle):
        """Answers with `handle`, or, when Gatehouse does not answer (stopped, restarting, out of
        reach), with a 503 page that says so, logged with the cause: not a dropped connection."""
        self.cookies = []
        try:
            handle()
        except (URLError, TimeoutError) as error:
            cause = getattr(error, "reason", error)
            print(f"{self.command} {self.path}: Gatehouse is not answering: {cause}")
            self.cookies = []
            again = self.path if self.command == "GET" else "/"
            body = (
                "<h1>Try again in a moment</h1>\n"
                '<p role="alert">Gatehouse, the sign-in service, is not answering: '
                "try again in a moment.</p>\n"
                f'<p><a href="{html.escape(again)}">Try again</a></p>'
            )
            self.answer(503, page("Try again in a moment", body), headers={"Retry-After": "5"})

    def get(self):
        path = urlsplit(self.path).path
        if path == "/api/me":
            self.api_me()
            return
        session, self.cookies = session_from_gatehouse(self.headers)
        if path == "/":
            if session:
                links = (
                    '<p><a href="/dashboard">Dashboard</a> · '
                    '<a href="/account">Your account</a></p>\n'
                    # Gatehouse's sign-out page: one button, then back here.
                    '<p><a href="/api/auth/signout?callbackUrl=%2F">Sign out</a></p>'
                )
            else:
                # Gatehouse's pages, on this origin through nginx: sign-in (back here after;
                # every way in: the password, two-step sign-in, a mailed link, passkeys),
                # "Forgot your password?" and sign-up; and a button per identity provider.
                links = (
                    '<p><a href="/api/auth/signin?callbackUrl=%2F">Sign in</a></p>\n'
                    f"{self.provider_buttons()}"
                    f'<p><a href="{FORGOT_PASSWORD_PAGE}">Forgot your password?</a> · '
                    f'<a href="{SIGN_UP_PAGE}">Create an account</a></p>'
                )
            body = (
                "<h1>My app</h1>\n"
                f'<p>Asking Gatehouse: <span id="server-gatehouse">'
                f"{html.escape(describe(session))}</span></p>\n{links}"
            )
            self.answer(200, page("My app", body))
        elif path == "/dashboard":
            # A protected page: no session, no page; sign in, then come back here.
            if not session:
                self.send_sign_in("/dashboard")
                return
            name = session["user"].get("name") or session["user"]["email"]
            body = (
                "<h1>Dashboard</h1>\n"
                f'<p id="dashboard">Only for signed-in people: {html.escape(name)}, '
                "this page is yours.</p>\n"
                '<p><a href="/">Home</a></p>'
            )
            self.answer(200, page("Dashboard", body))
        elif path == "/account":
            if not session:
                self.send_sign_in("/account")
                return
            said = DONE.get(parse_qs(urlsplit(self.path).query).get("done", [""])[0], "")
            self.account_page(session, said=said)
        else:
            self.answer(404, page("Not found", "<h1>Not found</h1>"))

    def post(self):
        # This app's own form: the password change, posted on to Gatehouse's account API.
        if urlsplit(self.path).path != "/account/password":
            self.answer(404, page("Not found", "<h1>Not found</h1>"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        session, self.cookies = session_from_gatehouse(self.headers)
        if not session:
            self.send_sign_in("/account")
            return
        if form.get("newPassword") != form.get("repeat"):
            self.account_page(session, problem="The new passwords differ.", status=400)
            return
        # Gatehouse ends every other session and gives this one a new cookie (passed on).
        ok, message, cookies = post_account(
            "/password/change",
            {
                "currentPassword": form.get("currentPassword", ""),
                "newPassword": form.get("newPassword", ""),
            },
            self.headers,
            form.get("csrfToken", ""),
        )
        self.cookies += cookies
        if not ok:
            self.account_page(session, problem=message, status=400)
            return
        # Post/Redirect/Get: a reload does not post the form again.
        self.send_response(303)
        self.send_cookies()
        self.send_header("Location", "/account?done=password")
        self.end_headers()

    def api_me(self):
        """GET /api/me, for callers without the cookie (a mobile app, a script, another service,
        a page's fetch): who the token in `Authorization: Bearer` speaks for."""
        try:
            claims, refused = token_claims(self.headers.get("Authorization"))
        except jwt.PyJWKClientError as error:
            print(f"the token could not be checked: {error}", flush=True)
            message = "Gatehouse's keys could not be read: try again."
            self.answer_json(503, {"error": {"code": "unavailable", "message": message}})
            return
        if refused:
            problem = {"error": {"code": "invalid_token", "message": refused}}
            self.answer_json(401, problem, {"WWW-Authenticate": 'Bearer error="invalid_token"'})
            return
        me = {
            "id": claims["sub"],
            "email": claims.get("email"),
            "name": claims.get("name"),
            "session": claims.get("sid"),
            "amr": claims.get("amr"),
            "expires": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(claims["exp"])),
        }
        self.answer_json(200, me)

    def account_page(self, session, said="", problem="", status=200):
        """This app's own /account (Gatehouse's is at /api/auth/account, linked)."""
        token, cookies = csrf_token(self.headers)
        self.cookies += cookies
        user = session["user"]
        notices = (f'<p role="status">{html.escape(said)}</p>\n' if said else "") + (
            f'<p role="alert">{html.escape(problem)}</p>\n' if problem else ""
        )
        body = f"""<h1>Your account</h1>
<p id="account-email">{html.escape(user.get("name") or "")} · {html.escape(user["email"])}</p>
{notices}<h2>Password</h2>
<form id="change-password" method="post" action="/account/password">
  <input type="hidden" name="csrfToken" value="{html.escape(token)}">
  <p><label>Current password <input name="currentPassword" type="password" autocomplete="current-password" required></label></p>
  <p><label>New password <input name="newPassword" type="password" autocomplete="new-password" required></label></p>
  <p><label>New password again <input name="repeat" type="password" autocomplete="new-password" required></label></p>
  <button type="submit">Change password</button>
</form>
<h2>More</h2>
<p>Your address, where you are signed in, two-step sign-in, passkeys and your history are on
<a href="{ACCOUNT_PAGE}">Gatehouse's account page</a>.</p>
<p><a href="/">Home</a></p>"""
        self.answer(status, page("Your account", body))

    def provider_buttons(self):
        """A "Continue with …" form per identity provider Gatehouse has, posting Auth.js's fields
        to /api/auth/signin/<id> (through nginx): to the provider, and back here signed in."""
        providers = identity_providers(self.headers)
        if not providers:
            return ""
        token, cookies = csrf_token(self.headers)
        self.cookies += cookies
        return "".join(
            f'<form method="post" action="/api/auth/signin/{quote(p["id"], safe="")}">\n'
            f'  <input type="hidden" name="csrfToken" value="{html.escape(token)}">\n'
            '  <input type="hidden" name="callbackUrl" value="/">\n'
            f'  <button type="submit">Continue with {html.escape(p["name"])}</button>\n'
            "</form>\n"
            for p in providers
        )

    def send_sign_in(self, back):
        """No session: Gatehouse's sign-in page, then back to `back`."""
        self.send_response(303)
        self.send_cookies()
        self.send_header("Location", "/api/auth/signin?callbackUrl=" + quote(back, safe=""))
        self.end_headers()

    def answer(self, status, text, content_type="text/html; charset=utf-8", headers=None):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        # Pages that show a person's data are never cached.
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_cookies()
        self.end_headers()
        self.wfile.write(body)

    def answer_json(self, status, value, headers=None):
        self.answer(status, json.dumps(value), "application/json", headers)

    def send_cookies(self):
        for cookie in self.cookies:
            self.send_header("Set-Cookie", cookie)


if __name__ == "__main__":
    # Each line of the log as it is written, not when a buffer fills.
    sys.stdout.reconfigure(line_buffering=True)
    print(f"My app on http://127.0.0.1:{PORT} (open it through nginx)")
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
