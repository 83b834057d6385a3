// Placeholder until the polling host lands: the demo runs an orders service on an embedded SQS.
console.log('The demo arrives with the polling host (issue 3). Meanwhile: npm test');
