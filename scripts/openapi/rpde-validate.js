// Walks an RPDE feed of a running edge with @openactive/rpde-validator, the OpenActive
// community's validator (pinned in package.json), the way a harvesting partner would, and
// prints every finding, one per line: SEVERITY <tab> PAGE URL <tab> RULE: MESSAGE.
//   node scripts/openapi/rpde-validate.js URL TOKEN
// Exits 1 when any finding is a failure. Warnings are expected: the validator asks open data
// feeds for Cache-Control "public", which an API behind a token does not send (D38: private).
// The validator sends no Authorization header of its own, so its fetch is wrapped to add the
// token: the package has no option for it.
'use strict';
const UrlHelper = require('@openactive/rpde-validator/src/helpers/url-helper');
const { RpdeValidator } = require('@openactive/rpde-validator');

const [url, token] = process.argv.slice(2);
if (!url || !token) {
	console.error('usage: node rpde-validate.js URL TOKEN');
	process.exit(2);
}
const fetchPage = UrlHelper.fetch;
UrlHelper.fetch = (u, options = {}, timeout) =>
	fetchPage(u, { ...options, headers: { ...options.headers, Authorization: `Bearer ${token}` } }, timeout);

// pageLimit bounds the walk; the test's feeds are a few pages long.
RpdeValidator(url, { pageLimit: 1000, timeoutMs: 10000, logCallback: () => {} })
	.then((log) => {
		let failures = 0;
		for (const page of log.pages) {
			for (const e of page.errors) {
				console.log(`${e.severity}\t${page.url}\t${e.rule}: ${e.message}`);
				if (e.severity === 'failure') failures++;
			}
		}
		console.log(`pages\t${log.pages.length}\tfailures\t${failures}`);
		process.exit(failures > 0 ? 1 : 0);
	})
	.catch((e) => {
		console.error(e);
		process.exit(2);
	});
