s/dialect A and B clients/clients of either task protocol/g
s/a dialect B client/a tasks-extension client/g
s/a dialect A client/a client of the 2025-11-25 tasks/g
s/a dialect-A task/a task of the 2025-11-25 tasks/g
s/a dialect-B one/one of the tasks extension/g
s/a dialect-B task/a tasks-extension task/g
s/dialect-A /2025-11-25 /g
s/dialect-B /tasks-extension /g
s/as for dialect B/as for the tasks extension/g
s/as in dialect B/as in the tasks extension/g
s/in dialect A/in the 2025-11-25 tasks/g
s/in dialect B/in the tasks extension/g
s/as a dialect B call/as a call of the tasks extension/g
s/Dialect A/The 2025-11-25 tasks/g
s/Dialect B/The tasks extension/g
s/dialect A/the 2025-11-25 tasks/g
s/dialect B/the tasks extension/g
s/speak neither dialect/speak neither task protocol/g
s/each dialect's own cancel/each protocol's own cancel/g
s/upstream's task dialect/upstream's task protocol/g
s/both task dialects in use/both task protocols in use/g
s/a dialect-A$/a 2025-11-25/
s/both dialects'/both task protocols'/g
s/both task dialects/both task protocols/g
s/both dialects/both task protocols/g
s/Both dialects\./Both task protocols./g
