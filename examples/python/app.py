"""A server-rendered app in Python that reads Gatehouse's session, and an API taking its tokens.

nginx (nginx.conf) puts this app and Gatehouse on one origin: the browser signs in on
Gatehouse's own page, and this app forwards the browser's cookies to Gatehouse's
GET /api/auth/session to learn who is signed in. Sign-up, "Forgot your password?" and the
account settings are Gatehouse's pages, linked; this app's own /account has one form of its
own, the password change, which it posts on to Gatehouse's account API. GET /api/me answers
callers that send a token from Gatehouse's /api/auth/token instead of the cookie, checked with
PyJWT against Gatehouse's public keys. The standard library does the rest.
"""

import html
import json
import os
import re
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


def session_from_gatehouse(cookie):
    """Gatehouse's answer for the browser's cookies, and the cookies it sets.

    The session is None, or {"user": {"id", "email", "name"}, "expires"}: None as soon as it
    was signed out or revoked, or the user disabled or removed. When the session's refresh is
    due (once a day), Gatehouse sets a new cookie: the caller passes it on to the browser."""
    request = urllib.request.Request(
        f"{GATEHOUSE_URL}/api/auth/session", headers={"Cookie": cookie or ""}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response), response.headers.get_all("Set-Cookie") or []


def csrf_token(cookie):
    """A CSRF token for a form of this app that posts to Gatehouse, and the cookies Gatehouse
    sets with it (its CSRF cookie, which the token is checked against: passed on)."""
    request = urllib.request.Request(
        f"{GATEHOUSE_URL}/api/auth/csrf", headers={"Cookie": cookie or ""}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)["csrfToken"], response.headers.get_all("Set-Cookie") or []


def post_account(route, fields, cookie, token, forwarded_for):
    """POST /api/account/<route> (Gatehouse's account API, JSON) with the browser's cookies and
    the form's CSRF token. Returns (ok, message, cookies): on a refusal, the message Gatehouse
    wrote for the person; the cookies it sets (a password change gives the session a new one)
    are passed on."""
    request = urllib.request.Request(
        f"{GATEHOUSE_URL}/api/account{route}",
        data=json.dumps(fields).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Cookie": cookie or "",
            "X-CSRF-Token": token,
            "X-Forwarded-For": forwarded_for or "",
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
<head><meta charset="utf-8"><title>{html.escape(title)}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto">
{body}
</body>
</html>"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        path = urlsplit(self.path).path
        if path == "/api/me":
            self.api_me()
            return
        session, self.cookies = session_from_gatehouse(self.headers.get("Cookie"))
        if path == "/":
            if session:
                links = (
                    '<p><a href="/dashboard">Dashboard</a> · '
                    '<a href="/account">Your account</a></p>\n'
                    # Gatehouse's sign-out page: one button, then back here.
                    '<p><a href="/api/auth/signout?callbackUrl=%2F">Sign out</a></p>'
                )
            else:
                # Gatehouse's pages, on this origin through nginx: sign-in (back here after),
                # "Forgot your password?" and sign-up.
                links = (
                    '<p><a href="/api/auth/signin?callbackUrl=%2F">Sign in</a></p>\n'
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

    def do_POST(self):
        # This app's own form: the password change, posted on to Gatehouse's account API.
        if urlsplit(self.path).path != "/account/password":
            self.cookies = []
            self.answer(404, page("Not found", "<h1>Not found</h1>"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        cookie = self.headers.get("Cookie")
        session, self.cookies = session_from_gatehouse(cookie)
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
            cookie,
            form.get("csrfToken", ""),
            self.headers.get("X-Forwarded-For"),
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
        self.cookies = []
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
        token, cookies = csrf_token(self.headers.get("Cookie"))
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
    print(f"My app on http://127.0.0.1:{PORT} (open it through nginx)", flush=True)
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
