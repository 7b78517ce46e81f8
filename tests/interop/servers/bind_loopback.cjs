// Preloaded with `node --require` into server-everything, whose HTTP modes call app.listen(PORT)
// without a host (all interfaces). Test peers must bind 127.0.0.1 only, so a listen() on a bare
// port gets the loopback host added.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    const bare = typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]));
    if (bare && typeof args[1] !== 'string') {
        args.splice(1, 0, '127.0.0.1');
    } else if (args[0] && typeof args[0] === 'object' && args[0].path === undefined && args[0].host === undefined) {
        args[0] = { ...args[0], host: '127.0.0.1' };
    }
    return listen.apply(this, args);
};
